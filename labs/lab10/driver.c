/* driver.c: lab 10's plug-in: rank plans from hwloc XML, binding options, real binding.
 *
 *   lab10 plan xml=datasets/hwloc/aws-p4d.24xlarge.xml [host=node01]
 *   lab10 plan here=1                   this machine (its topology exported as XML)
 *       your cpusets of every GPU and NIC, every rank's NIC and cpuset (rank r
 *       drives GPU r), and the binding options of the job
 *   lab10 smi file=topo.txt             the CPU Affinity column of a saved nvidia-smi topo -m
 *   lab10 bind --sets '0|0-3|all'       your binding of the student's program to each set;
 *       the harness then reads the program's affinity (sched_getaffinity of its
 *       pid) and, after it spun for 20 ms, the CPU it last ran on (/proc/PID/stat)
 *   lab10 membw [--repeats 7] [--force 1]  memory bandwidth on NUMA node 0's memory: the
 *       harness bound to node 0, your binding to node 0, the harness bound to
 *       node 1, interleaved; needs 2 NUMA nodes (force=1 runs it on one)
 *
 * The topology reaches the student's program as XML text in shared memory
 * (hwloc_topology_set_xmlbuffer): the program opens no file of the course.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/harness.h"
#include "lab10.h"

#define MAXD LAB10_MAX_DEVICES
#define LIST LAB10_LIST_LEN

/* What the student's program writes for one plan (in shared memory). */
typedef struct plan_out {
    int load_status;
    char load_error[256];
    int ngpus, nnics;
    int gpu_status[MAXD], nic_status[MAXD], rank_status[MAXD], rank_nic[MAXD];
    char gpu_busid[MAXD][16];
    char gpu_cpuset[MAXD][LIST], nic_cpuset[MAXD][LIST], rank_cpuset[MAXD][LIST];
    char nic_name[MAXD][32];
    int options_status;
    char options_error[256];
    lab10_options options;
} plan_out;

typedef struct plan_args {
    const char *xml; /* shared memory */
    size_t xml_len;
    char host[64];
    plan_out *out; /* shared memory */
} plan_args;

typedef struct bind_args {
    char cpus[LIST];
} bind_args;

typedef struct spin_args {
    double seconds;
} spin_args;

typedef struct copy_args {
    void *dst; /* shared memory the harness placed on one NUMA node */
    const void *src;
    size_t bytes;
    int reps;
} copy_args;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef CL_STUDENT_SIDE

static void list_of(hwloc_const_bitmap_t set, char *out)
{
    hwloc_bitmap_list_snprintf(out, LIST, set);
}

/* The devices' cpusets, every rank's NIC and cpuset, and the options. */
static cl_result plan_all(hwloc_topology_t t, const lab10_devices *d, const char *host, plan_out *o)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), sets[MAXD] = {0};
    if (!set)
        return CL_ERR_NOMEM;
    for (int k = 0; k < d->ngpus + d->nnics; k++) {
        int gpu = k < d->ngpus, i = gpu ? k : k - d->ngpus;
        hwloc_bitmap_zero(set);
        cl_result rc = lab10_device_cpuset(t, gpu ? d->gpu[i] : d->nic[i], set);
        (gpu ? o->gpu_status : o->nic_status)[i] = rc;
        if (rc == CL_OK)
            list_of(set, gpu ? o->gpu_cpuset[i] : o->nic_cpuset[i]);
    }
    int users[MAXD] = {0}, all_ok = d->ngpus > 0;
    for (int r = 0; r < d->ngpus; r++) {
        int nic = lab10_pick_nic(t, d, r, users);
        nic = nic >= 0 && nic < d->nnics ? nic : -1;
        if (nic >= 0)
            users[nic]++;
        o->rank_nic[r] = nic;
        sets[r] = hwloc_bitmap_alloc();
        o->rank_status[r] = sets[r] ? lab10_rank_cpuset(t, d, r, nic, sets[r]) : CL_ERR_NOMEM;
        all_ok &= o->rank_status[r] == CL_OK;
        if (o->rank_status[r] == CL_OK)
            list_of(sets[r], o->rank_cpuset[r]);
    }
    o->options_status = CL_ERR_INVALID;
    snprintf(o->options_error, sizeof o->options_error, "not every rank has a cpuset");
    if (all_ok) {
        cl_clear_error();
        o->options_status =
            lab10_format_options(t, (hwloc_bitmap_t const *)sets, d->ngpus, host, &o->options);
        snprintf(o->options_error, sizeof o->options_error, "%s", cl_last_error());
    }
    for (int r = 0; r < d->ngpus; r++)
        hwloc_bitmap_free(sets[r]);
    hwloc_bitmap_free(set);
    return CL_OK;
}

static cl_result plan(cl_comm *c, void *args)
{
    (void)c;
    plan_args *a = args;
    plan_out *o = a->out;
    hwloc_topology_t t;
    lab10_devices d;
    o->load_status = lab10_load_xml(a->xml, a->xml_len, &t);
    if (o->load_status != CL_OK) {
        snprintf(o->load_error, sizeof o->load_error, "%s", cl_last_error());
        return CL_OK;
    }
    cl_result rc = lab10_find_devices(t, &d);
    if (rc == CL_OK) {
        o->ngpus = d.ngpus, o->nnics = d.nnics;
        for (int i = 0; i < d.ngpus; i++) {
            const struct hwloc_pcidev_attr_s *p = &d.gpu[i]->attr->pcidev;
            snprintf(o->gpu_busid[i], sizeof o->gpu_busid[i], "%04x:%02x:%02x.%x", p->domain,
                     p->bus, p->dev, p->func);
        }
        for (int i = 0; i < d.nnics; i++)
            snprintf(o->nic_name[i], sizeof o->nic_name[i], "%s", d.nic_name[i]);
        rc = plan_all(t, &d, a->host, o);
    }
    hwloc_topology_destroy(t);
    return rc;
}

static cl_result bind(cl_comm *c, void *args)
{
    (void)c;
    bind_args *a = args;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return CL_ERR_NOMEM;
    a->cpus[LIST - 1] = '\0';
    cl_result rc = CL_ERR_INVALID;
    if (hwloc_bitmap_list_sscanf(set, a->cpus) == 0)
        rc = lab10_bind_here(set);
    else
        cl_set_error("'%s' is not a CPU list", a->cpus);
    hwloc_bitmap_free(set);
    return rc;
}

/* Busy for a while, so that the harness sees where the program runs. */
static cl_result spin(cl_comm *c, void *args)
{
    (void)c;
    double end = now_s() + ((spin_args *)args)->seconds;
    volatile unsigned long k = 0;
    while (now_s() < end)
        k++;
    return CL_OK;
}

/* memcpy between the two buffers the harness gave, reps times. */
static cl_result copy(cl_comm *c, void *args)
{
    (void)c;
    copy_args *a = args;
    for (int i = 0; i < a->reps; i++)
        memcpy(a->dst, a->src, a->bytes);
    return CL_OK;
}

CL_STUDENT_ENTRIES({"plan", plan}, {"bind", bind}, {"spin", spin}, {"copy", copy});

#else

#include "boundary/arena.h"
#include "boundary/inspect.h"

/* --- plan ----------------------------------------------------------------------------------- */

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
    FILE *f = fopen(path, "rb");
    if (!f) {
        cl_set_error("cannot read %s", path);
        return CL_ERR_IO;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    *xml = size > 0 && size < (64L << 20) ? malloc((size_t)size + 1) : NULL;
    *len = *xml ? fread(*xml, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!*xml || *len != (size_t)size) {
        free(*xml);
        cl_set_error("cannot read %s", path);
        return CL_ERR_IO;
    }
    (*xml)[*len] = '\0';
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

static cl_result plan_case(cl_case *c)
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
static cl_result smi_case(cl_case *c)
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

/* --- bind ------------------------------------------------------------------------------------- */

/* The CPUs process pid may run on, as the kernel says. */
static void affinity_of(pid_t pid, hwloc_bitmap_t out)
{
    cpu_set_t mask;
    CPU_ZERO(&mask);
    hwloc_bitmap_zero(out);
    if (sched_getaffinity(pid, sizeof mask, &mask) == 0)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &mask))
                hwloc_bitmap_set(out, (unsigned)i);
}

/* The CPU process pid last ran on (field 39 of /proc/PID/stat), or -1. */
static int last_cpu(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    int field = 2, cpu = -1;
    for (char *t = p ? strtok(p + 1, " ") : NULL; t; t = strtok(NULL, " "))
        if (++field == 39) {
            cpu = atoi(t);
            break;
        }
    return cpu;
}

/* One requested set: your binding, then the kernel's view of the program. */
static cl_result bind_one(cl_run *run, cl_comm *c, const char *cpus)
{
    char buf[LIST];
    bind_args a;
    cl_call_result res;
    snprintf(a.cpus, sizeof a.cpus, "%s", cpus);
    CL_CHECK(cl_student_run(c, "bind", &a, sizeof a, 0, &res));
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "requested", cpus);
    cl_col_call(row, &res);
    pid_t pid = cl_student_pid();
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), seen = hwloc_bitmap_alloc();
    affinity_of(pid, set);
    hwloc_bitmap_list_snprintf(buf, sizeof buf, set);
    cl_col_str(row, "affinity", buf);
    cl_result rc = CL_OK;
    for (int i = 0; i < 5 && pid && rc == CL_OK; i++) {
        spin_args s = {.seconds = 0.02};
        rc = cl_student_run(c, "spin", &s, sizeof s, 0, &res);
        int cpu = last_cpu(pid);
        if (cpu >= 0)
            hwloc_bitmap_set(seen, (unsigned)cpu);
    }
    hwloc_bitmap_list_snprintf(buf, sizeof buf, seen);
    cl_col_str(row, "ran_on", buf);
    cl_row_end(row);
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(seen);
    return rc;
}

static cl_result bind_mode(cl_run *run, cl_comm *c)
{
    char sets[4096], *save = NULL, buf[LIST];
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    affinity_of(0, mine);
    hwloc_bitmap_list_snprintf(buf, sizeof buf, mine);
    hwloc_bitmap_free(mine);
    cl_report_str(run, "allowed", buf); /* where this process may run */
    snprintf(sets, sizeof sets, "%s", cl_opt(run, "sets"));
    for (char *t = strtok_r(sets, "|", &save); t; t = strtok_r(NULL, "|", &save))
        CL_CHECK(bind_one(run, c, strcmp(t, "all") == 0 ? buf : t));
    return CL_OK;
}

/* --- membw ----------------------------------------------------------------------------------- */

#define MEMBW_BYTES ((size_t)64 << 20)
#define MEMBW_REPS  4

/* GB/s of the harness's own copy of src to dst, bound to node's CPUs. */
static double harness_copy(hwloc_topology_t t, hwloc_obj_t node, void *dst, const void *src)
{
    hwloc_set_cpubind(t, node->cpuset, HWLOC_CPUBIND_THREAD);
    double t0 = now_s();
    for (int i = 0; i < MEMBW_REPS; i++)
        memcpy(dst, src, MEMBW_BYTES);
    return (double)MEMBW_BYTES * MEMBW_REPS / (now_s() - t0) / 1e9;
}

/* Two buffers in the shared arena whose pages live on NUMA node n0: touched first
 * by this thread bound to n0, then bound there (a no-op where they are already). */
static cl_result node_buffers(hwloc_topology_t t, hwloc_obj_t n0, void **src, void **dst)
{
    hwloc_set_cpubind(t, n0->cpuset, HWLOC_CPUBIND_THREAD);
    CL_CHECK(cl_host_alloc(MEMBW_BYTES, src));
    CL_CHECK(cl_host_alloc(MEMBW_BYTES, dst));
    void *p[2] = {*src, *dst};
    for (int i = 0; i < 2; i++)
        hwloc_set_area_membind(t, p[i], MEMBW_BYTES, n0->nodeset, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_MIGRATE);
    memset(*src, 1, MEMBW_BYTES), memset(*dst, 2, MEMBW_BYTES);
    return CL_OK;
}

/* Each repeat: the harness bound to node 0, your binding (to node 0's CPUs),
 * the harness bound to node 1, all copying the same node-0 buffers. */
static cl_result membw_mode(cl_run *run, cl_comm *c)
{
    int repeats = cl_run_opts(run)->repeats > 64 ? 64 : cl_run_opts(run)->repeats;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0)
        return CL_ERR_BACKEND;
    int nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    cl_report_int(run, "numa_nodes", nodes);
    if (nodes < 2 && atoi(cl_opt(run, "force")) == 0) {
        hwloc_topology_destroy(t);
        cl_set_error("needs 2 NUMA nodes (found %d)", nodes);
        return CL_ERR_UNSUPPORTED;
    }
    hwloc_obj_t n0 = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, 0);
    hwloc_obj_t n1 = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, nodes > 1 ? 1 : 0);
    double local[64], mine[64], remote[64];
    void *src = NULL, *dst = NULL;
    bind_args b;
    cl_call_result res;
    hwloc_bitmap_list_snprintf(b.cpus, sizeof b.cpus, n0->cpuset);
    cl_report_str(run, "node0_cpus", b.cpus);
    cl_result rc = node_buffers(t, n0, &src, &dst);
    if (rc == CL_OK)
        rc = cl_student_run(c, "bind", &b, sizeof b, 0, &res);
    if (rc == CL_OK && res.status != CL_OK)
        rc = res.status;
    copy_args a = {.dst = dst, .src = src, .bytes = MEMBW_BYTES, .reps = MEMBW_REPS};
    for (int r = 0; rc == CL_OK && r < repeats; r++) {
        local[r] = harness_copy(t, n0, dst, src);
        rc = cl_student_run(c, "copy", &a, sizeof a, 0, &res);
        if (rc == CL_OK && res.status != CL_OK)
            rc = res.status;
        mine[r] = (double)MEMBW_BYTES * MEMBW_REPS / res.seconds / 1e9;
        remote[r] = harness_copy(t, n1, dst, src);
    }
    if (rc == CL_OK) {
        cl_row *row = cl_row_begin(run, c);
        cl_col_nums(row, "local_gbps", local, (size_t)repeats, "%.2f");
        cl_col_nums(row, "student_gbps", mine, (size_t)repeats, "%.2f");
        cl_col_nums(row, "remote_gbps", remote, (size_t)repeats, "%.2f");
        cl_row_end(row);
    }
    cl_host_free(src);
    cl_host_free(dst);
    hwloc_topology_destroy(t);
    return rc;
}

static const cl_mode modes[] = {
    {.name = "plan",
     .help = "your cpusets, NICs and options: xml=FILE or here=1 [host=H]",
     .cases = plan_case},
    {.name = "smi",
     .help = "GPU CPU affinities of a saved `nvidia-smi topo -m`: file=F",
     .cases = smi_case},
    {.name = "bind",
     .help = "your binding of each of --sets A|B|..., seen from outside",
     .ranks = bind_mode,
     .backends = "cpu"},
    {.name = "membw",
     .help = "node-0 memory bandwidth: yours vs local and remote binding",
     .ranks = membw_mode,
     .backends = "cpu"},
    {0}};

static const cl_option options[] = {
    {.name = "sets",
     .help = "A|B|...  bind: CPU lists to bind to ('all': every allowed CPU)",
     .fallback = "all"},
    {.name = "force", .help = "1  membw: run on one NUMA node too", .fallback = "0"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab10",
    .title = "CPU/NUMA 亲和性绑定",
    .modes = modes,
    .options = options,
    .permits = CL_PERMIT_AFFINITY,
    .arena_bytes = (size_t)256 << 20, /* membw's two buffers live there */
};

#endif
