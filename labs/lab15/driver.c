/* driver.c: lab 15's plug-in: the student's parsers of the tools' outputs and the
 * validator of a cluster's lossless RoCE configuration.
 *
 *   lab15 qos file=mlnx_qos.txt         your parse of one mlnx_qos output
 *   lab15 gids file=show_gids.txt       your parse of show_gids
 *   lab15 devinfo file=devinfo.txt      your parse of ibv_devinfo -v
 *   lab15 switch file=show_roce.txt     your parse of a switch's show roce
 *   lab15 validate dump=cluster.txt     your findings and fixes for a whole dump
 *   (or --cases FILE with one case per line)
 *
 * The harness reads the files (the student's program opens none) and, for a dump, splits
 * it into its sections: a line "### <kind> <node> $ <command>" starts each one.
 *
 * This file holds the student's entries and the lab's table; the parsers' modes are in
 * harness_parsers.c, the validator's in harness_validate.c, the columns both write in
 * harness_columns.c (lab15_harness.h). */
#include "lab15_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result e_qos(cl_comm *c, void *args)
{
    (void)c;
    qos_args *a = args;
    return lab15_parse_mlnx_qos(a->text, &a->q);
}

static cl_result e_gids(cl_comm *c, void *args)
{
    (void)c;
    gids_args *a = args;
    return lab15_parse_show_gids(a->text, a->g, 64, &a->n);
}

static cl_result e_devinfo(cl_comm *c, void *args)
{
    (void)c;
    devinfo_args *a = args;
    return lab15_parse_devinfo(a->text, a->p, 16, &a->n);
}

static cl_result e_switch(cl_comm *c, void *args)
{
    (void)c;
    switch_args *a = args;
    return lab15_parse_show_roce(a->text, &a->s);
}

static cl_result e_validate(cl_comm *c, void *args)
{
    (void)c;
    validate_args *a = args;
    return lab15_validate(&a->d, a->f, LAB15_MAX_FINDINGS, &a->n);
}

CL_STUDENT_ENTRIES({"qos", e_qos}, {"gids", e_gids}, {"devinfo", e_devinfo}, {"switch", e_switch},
                   {"validate", e_validate});

#else

const cl_lab cl_lab_def = {
    .name = "lab15",
    .title = "RoCEv2 无损配置: a validator of PFC, ECN, DSCP, GID, MTU and NCCL settings",
    .modes = (const cl_mode[]){{.name = "qos",
                                .help = "your parse of an mlnx_qos output: file=PATH",
                                .cases = qos_case},
                               {.name = "gids",
                                .help = "your parse of a show_gids output: file=PATH",
                                .cases = gids_case},
                               {.name = "devinfo",
                                .help = "your parse of an ibv_devinfo -v output: file=PATH",
                                .cases = devinfo_case},
                               {.name = "switch",
                                .help = "your parse of a switch's show roce: file=PATH",
                                .cases = switch_case},
                               {.name = "validate",
                                .help = "your findings and fixes for a cluster dump: dump=PATH",
                                .cases = validate_case},
                               {0}},
};

#endif
