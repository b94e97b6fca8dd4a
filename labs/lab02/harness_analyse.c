/* harness_analyse.c: lab 02's analyse mode. It hands the student the library's parse of the
 * case's file (so a parser bug costs the parser's points only) with a group of GPUs, and
 * reports the student's NVLink domains, SYS pairs, the group's domains and each GPU's NIC.
 */
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "lab02_harness.h"

/* --- 4 to 6: the analysis ----------------------------------------------------------------- */

/* "0,1,2,3" -> GPU device indices of t; a reason for anything else. */
static cl_result read_group(const char *text, const cl_topo *t, int *group, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || v < 0 || v >= t->ndevices ||
            t->dev[v].kind != CL_DEV_GPU || *n == CL_TOPO_MAX_DEVICES) {
            cl_set_error("group=%s: not a list of GPU indices", text);
            return CL_ERR_INVALID;
        }
        group[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return CL_OK;
}

/* Call the student's analysis of t (shared for the call) into *a. */
cl_result student_analyse(cl_case *c, const cl_topo *t, analyse_args *a)
{
    cl_topo *shared = cl_share(t, sizeof *t);
    if (!shared)
        return CL_ERR_NOMEM;
    a->topo = shared;
    cl_result rc = cl_case_call(c, "analyse", a, sizeof *a);
    cl_host_free(shared);
    a->nic_error[sizeof a->nic_error - 1] = '\0';
    return rc;
}

static int index_ok(const cl_topo *t, int v) { return v >= -1 && v < t->ndevices; }

cl_result analyse_case(cl_case *c)
{
    static cl_topo t;
    const char *path, *group = "";
    CL_CHECK(cl_case_str(c, "file", &path));
    cl_row *row = cl_case_row(c);
    cl_col_str(row, "file", path);
    if (cl_case_str(c, "group", &group) != CL_OK)
        group = "";
    CL_CHECK(cl_topo_load(path, &t)); /* the library's parse: the analysis stands alone */
    static analyse_args a;
    memset(&a, 0, sizeof a);
    CL_CHECK(read_group(group, &t, a.group, &a.ngroup));
    cl_result rc = student_analyse(c, &t, &a);
    if (rc != CL_OK)
        return rc;
    cl_col_int(row, "domains", a.ndomains);
    cl_col_int(row, "sys_pairs", a.sys_pairs);
    cl_col_str(row, "group", group);
    cl_col_int(row, "group_domains", a.group_domains);
    cl_col_str(row, "nic_status", cl_result_str(a.nic_status));
    if (a.nic_status != CL_OK)
        cl_col_str(row, "why", a.nic_error);
    for (int i = 0; i < t.ndevices; i++) {
        if (t.dev[i].kind != CL_DEV_GPU)
            continue;
        int nic = index_ok(&t, a.nic[i]) ? a.nic[i] : -2, d = a.domain[i];
        cl_row *g = cl_row_begin(cl_case_run(c), NULL);
        cl_col_str(g, "file", path);
        cl_col_int(g, "gpu", i);
        cl_col_int(g, "domain", d >= -1 && d < CL_TOPO_MAX_DEVICES ? d : -2);
        cl_col_int(g, "nic", nic);
        cl_col_str(g, "nic_name", nic >= 0 ? t.dev[nic].name : "-");
        cl_col_str(g, "path", nic >= 0 ? t.link[i][nic].code : "-");
        cl_row_end(g);
    }
    return CL_OK;
}
