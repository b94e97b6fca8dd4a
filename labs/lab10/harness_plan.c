/* harness_plan.c: lab 10's plan and smi modes: the student's plan of a topology (its XML
 * handed over in shared memory) reported column by column, and the CPU affinities of a saved
 * `nvidia-smi topo -m`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "harness/bundle.h"
#include "lab10_harness.h"

/* s[0..n) joined with '|' into a fresh string (the caller frees it). */
static char *joined(const char *base, size_t stride, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(base + (size_t)i * stride) + 1;
    char *out = calloc(1, len);
    for (int i = 0; out && i < n; i++) {
        if (i)
            strcat(out, "|");
        strcat(out, base + (size_t)i * stride);
    }
    return out;
}

static void col_joined(cl_row *row, const char *key, const char *base, size_t stride, int n)
{
    char *s = joined(base, stride, n);
    cl_col_str(row, key, s ? s : "");
    free(s);
}

static void col_status(cl_row *row, const char *key, const int *st, int n)
{
    char buf[MAXD * 24] = "";
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "|" : "",
                 cl_result_str((cl_result)st[i]));
    cl_col_str(row, key, buf);
}

/* The XML text (with its nul) of file xml=, or of this machine's topology (here=1),
 * in a fresh buffer the caller frees. */
static cl_result topology_text(cl_case *c, char **xml, size_t *len)
{
    const char *here = NULL, *path;
    if (cl_case_str(c, "here", &here) == CL_OK && strcmp(here, "1") == 0) {
        hwloc_topology_t t;
        char *buf = NULL;
        int n = 0;
        if (hwloc_topology_init(&t) != 0)
            return CL_ERR_NOMEM;
        hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        int bad = hwloc_topology_load(t) != 0 || hwloc_topology_export_xmlbuffer(t, &buf, &n, 0);
        *xml = bad ? NULL : malloc((size_t)n);
        if (*xml)
            memcpy(*xml, buf, (size_t)n);
        if (!bad)
            hwloc_free_xmlbuffer(t, buf);
        hwloc_topology_destroy(t);
        if (!*xml) {
            cl_set_error("hwloc cannot export this machine's topology");
            return CL_ERR_BACKEND;
        }
        *len = (size_t)n;
        return CL_OK;
    }
    cl_clear_error();
    CL_CHECK(cl_case_str(c, "xml", &path));
    CL_CHECK(cl_read_file(path, (size_t)64 << 20, xml, len));
    if (*len == 0) {
        free(*xml);
        *xml = NULL;
        cl_set_error("%s: an empty file", path);
        return CL_ERR_IO;
    }
    *len += 1; /* hwloc counts the terminating nul */
    return CL_OK;
}

static void plan_columns(cl_row *row, const plan_out *o)
{
    const lab10_options *op = &o->options;
    char nics[MAXD][32];
    for (int r = 0; r < o->ngpus; r++)
        snprintf(nics[r], sizeof nics[r], "%s",
                 o->rank_nic[r] >= 0 ? o->nic_name[o->rank_nic[r]] : "-");
    cl_col_int(row, "gpus", o->ngpus);
    cl_col_int(row, "nics", o->nnics);
    col_joined(row, "gpu_busid", o->gpu_busid[0], sizeof o->gpu_busid[0], o->ngpus);
    col_status(row, "gpu_status", o->gpu_status, o->ngpus);
    col_joined(row, "gpu_cpuset", o->gpu_cpuset[0], LIST, o->ngpus);
    col_joined(row, "nic_name", o->nic_name[0], sizeof o->nic_name[0], o->nnics);
    col_status(row, "nic_status", o->nic_status, o->nnics);
    col_joined(row, "nic_cpuset", o->nic_cpuset[0], LIST, o->nnics);
    col_joined(row, "rank_nic", nics[0], sizeof nics[0], o->ngpus);
    col_status(row, "rank_status", o->rank_status, o->ngpus);
    col_joined(row, "rank_cpuset", o->rank_cpuset[0], LIST, o->ngpus);
    cl_col_str(row, "options_status", cl_result_str((cl_result)o->options_status));
    cl_col_str(row, "options_error", o->options_status == CL_OK ? "" : o->options_error);
    int ok = o->options_status == CL_OK, n = ok ? o->ngpus : 0;
    col_joined(row, "cpulist", op->cpulist[0], LIST, n);
    col_joined(row, "taskset", op->taskset[0], LIST, n);
    col_joined(row, "numactl", op->numactl[0], LIST, n);
    cl_col_str(row, "slurm_mask", ok ? op->slurm_mask : "");
    cl_col_str(row, "slurm_map", ok ? op->slurm_map : "");
    cl_col_str(row, "ompi_cpuset", ok ? op->ompi_cpuset : "");
    cl_col_str(row, "ompi_map", ok ? op->ompi_map : "");
    cl_col_str(row, "rankfile", ok ? op->rankfile : "");
}

cl_result plan_case(cl_case *c)
{
    char *xml = NULL;
    size_t len = 0;
    const char *host = "localhost";
    CL_CHECK(topology_text(c, &xml, &len));
    if (cl_case_str(c, "host", &host) != CL_OK)
        host = "localhost";
    cl_clear_error();
    plan_args a = {.xml_len = len};
    snprintf(a.host, sizeof a.host, "%s", host);
    a.xml = cl_share(xml, len);
    plan_out *o = NULL;
    cl_result rc = a.xml ? cl_host_alloc(sizeof *o, (void **)&o) : CL_ERR_NOMEM;
    free(xml);
    if (rc != CL_OK)
        return rc;
    memset(o, 0, sizeof *o);
    a.out = o;
    rc = cl_case_call(c, "plan", &a, sizeof a);
    if (rc == CL_OK && o->load_status != CL_OK) {
        cl_set_error("%s", o->load_error);
        rc = (cl_result)o->load_status;
    }
    if (rc == CL_OK) {
        plan_out *copy = malloc(sizeof *copy); /* the student's program may still scribble */
        if (!copy) {
            rc = CL_ERR_NOMEM;
        } else {
            memcpy(copy, o, sizeof *copy);
            copy->ngpus = copy->ngpus < 0 || copy->ngpus > MAXD ? 0 : copy->ngpus;
            copy->nnics = copy->nnics < 0 || copy->nnics > MAXD ? 0 : copy->nnics;
            for (int r = 0; r < copy->ngpus; r++)
                if (copy->rank_nic[r] >= copy->nnics)
                    copy->rank_nic[r] = -1;
            plan_columns(cl_case_row(c), copy);
            free(copy);
        }
    }
    cl_host_free(o);
    return rc;
}

/* The CPU affinity of every GPU in a saved `nvidia-smi topo -m` (common/topo.h's
 * parser): what gpu.here compares with the plan of this machine. */
cl_result smi_case(cl_case *c)
{
    const char *path;
    static cl_topo t;
    char list[CL_TOPO_MAX_DEVICES][CL_TOPO_CPUSET_LEN];
    int n = 0;
    CL_CHECK(cl_case_str(c, "file", &path));
    CL_CHECK(cl_topo_load(path, &t));
    for (int i = 0; i < t.ndevices; i++)
        if (t.dev[i].kind == CL_DEV_GPU)
            snprintf(list[n++], sizeof list[0], "%s", t.dev[i].cpu_affinity);
    cl_col_int(cl_case_row(c), "gpus", n);
    col_joined(cl_case_row(c), "cpu_affinity", list[0], sizeof list[0], n);
    return CL_OK;
}
