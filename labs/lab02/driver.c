/* driver.c: lab 02's plug-in: legend codes, row splitting, the parser, the analysis, the probe.
 *
 *   lab02 codes   code=NV12                        how your code classifies a legend code
 *   lab02 split   text=%09NV1%09SYS want=2          your split of one row (text percent-encoded)
 *   lab02 parse   file=datasets/topologies/dgx1-v100.topo.txt       your parse, one row per device
 *   lab02 analyse file=datasets/topologies/dgx1-v100.topo.txt group=0,1,2,3
 *                                                  your domains, SYS pairs, group and NICs
 *   lab02 probe   smi=FILE                         this machine's CUDA runtime vs your parse of
 *                                                  FILE (the output of `nvidia-smi topo -m`)
 * Every mode also reads --cases FILE, one case per line.
 *
 * The student's program opens no file: the harness reads each file and shares
 * its text. The analysis gets the library's parse of the file (so a parser bug
 * costs the parser's points only); the probe uses the student's own parse.
 *
 * This file holds the student's entries and the lab's table; the modes are in
 * harness_codes.c, harness_parse.c, harness_analyse.c and harness_probe.c, the file reader
 * and the student's parse and analysis they share in harness_parse.c and harness_analyse.c
 * (lab02_harness.h).
 */
#include <stdio.h>
#include <string.h>

#include "lab02_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result code(cl_comm *c, void *args)
{
    (void)c;
    code_args *a = args;
    return lab02_parse_code(a->code, &a->out);
}

static cl_result split(cl_comm *c, void *args)
{
    (void)c;
    split_args *a = args;
    const char *rest = NULL;
    a->count = lab02_split_codes(a->text, a->codes, a->want, &rest);
    a->rest = rest && rest >= a->text && rest <= a->text + strlen(a->text) ? rest - a->text : -1;
    return CL_OK;
}

static cl_result parse(cl_comm *c, void *args)
{
    (void)c;
    parse_args *a = args;
    return lab02_parse_topo(a->text, a->path, a->out);
}

static cl_result analyse(cl_comm *c, void *args)
{
    (void)c;
    analyse_args *a = args;
    a->ndomains = lab02_nvlink_domains(a->topo, a->domain);
    a->sys_pairs = lab02_sys_pairs(a->topo);
    a->group_domains =
        a->ndomains >= 0 ? lab02_group_domains(a->topo, a->domain, a->group, a->ngroup) : -1;
    cl_clear_error();
    a->nic_status = lab02_assign_nics(a->topo, a->nic);
    snprintf(a->nic_error, sizeof a->nic_error, "%s", cl_last_error());
    return CL_OK;
}

CL_STUDENT_ENTRIES({"code", code}, {"split", split}, {"parse", parse}, {"analyse", analyse});

#else

const cl_lab cl_lab_def = {
    .name = "lab02",
    .title = "NVLink/PCIe 拓扑探测",
    .modes =
        (const cl_mode[]){
            {.name = "codes", .help = "your classification of code=CODE", .cases = codes_case},
            {.name = "split",
             .help = "your split of text=PERCENT-ENCODED want=N",
             .cases = split_case},
            {.name = "parse",
             .help = "your parse of file=PATH (nvidia-smi topo -m output)",
             .cases = parse_case},
            {.name = "analyse",
             .help = "your analysis of file=PATH [group=0,1,...]",
             .cases = analyse_case},
            {.name = "probe",
             .help = "this machine's CUDA runtime vs your parse of smi=PATH",
             .cases = probe_case},
            {0}},
};

#endif
