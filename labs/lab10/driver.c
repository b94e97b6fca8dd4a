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
 *
 * This file holds the student's entries and the lab's table; the plan and smi modes are in
 * harness_plan.c, the bind mode in harness_bind.c and the membw mode in harness_membw.c
 * (lab10_harness.h).
 */
#include <stdio.h>
#include <string.h>

#include "lab10_harness.h"

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
    double end = cl_wtime() + ((spin_args *)args)->seconds;
    volatile unsigned long k = 0;
    while (cl_wtime() < end)
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
