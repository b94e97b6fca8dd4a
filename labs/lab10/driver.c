/* driver.c: lab 10's harness: runs the student's affinity functions and writes JSON.
 *
 *   lab10 plan FILE.xml [--host H] --json OUT   ranks of a recorded hwloc topology
 *   lab10 plan --here [--host H] --json OUT     ranks of this machine (its real PCI tree)
 *   lab10 bind --json OUT                       bind threads here; report where they ran
 *   lab10 membw [--force] [--repeats R] --json OUT
 *       memory bandwidth of a buffer on NUMA node 0: the student's binding, the
 *       harness's own binding to node 0 and a binding to node 1, interleaved.
 *       Needs 2 NUMA nodes; --force runs it on one (node 0 stands for both).
 *
 * Rank r drives GPU r (PCI bus-id order). The student's code never writes the
 * output: the harness prints every bitmap it gets back. Exit status: 0 ok,
 * 2 bad usage or input, 1 anything else.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab10.h"

typedef struct options {
    const char *mode, *file, *json_path, *host;
    int here, force, repeats;
} options;

static int busid_cmp(const void *a, const void *b)
{
    const struct hwloc_pcidev_attr_s *x = &(*(hwloc_obj_t const *)a)->attr->pcidev;
    const struct hwloc_pcidev_attr_s *y = &(*(hwloc_obj_t const *)b)->attr->pcidev;
    unsigned kx[4] = {x->domain, x->bus, x->dev, x->func};
    unsigned ky[4] = {y->domain, y->bus, y->dev, y->func};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

static void busid_str(hwloc_obj_t o, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%x", o->attr->pcidev.domain, o->attr->pcidev.bus,
             o->attr->pcidev.dev, o->attr->pcidev.func);
}

/* GPUs: NVIDIA display/3D PCI functions; NICs: PCI functions with an OpenFabrics OS device. */
static cl_result find_devices(hwloc_topology_t t, lab10_devices *d)
{
    memset(d, 0, sizeof *d);
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o));) {
        unsigned cls = o->attr->pcidev.class_id;
        if (o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300)) {
            if (d->ngpus == LAB10_MAX_DEVICES)
                return CL_ERR_INVALID;
            d->gpu[d->ngpus++] = o;
        }
        for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
            if (c->type == HWLOC_OBJ_OS_DEVICE &&
                c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
                if (d->nnics == LAB10_MAX_DEVICES)
                    return CL_ERR_INVALID;
                d->nic[d->nnics++] = o;
                break;
            }
        }
    }
    qsort(d->gpu, (size_t)d->ngpus, sizeof d->gpu[0], busid_cmp);
    qsort(d->nic, (size_t)d->nnics, sizeof d->nic[0], busid_cmp);
    for (int n = 0; n < d->nnics; n++)
        for (hwloc_obj_t c = d->nic[n]->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE &&
                c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
                snprintf(d->nic_name[n], sizeof d->nic_name[n], "%s", c->name);
                break;
            }
    return CL_OK;
}

static cl_result load_topology(const options *opt, hwloc_topology_t *t)
{
    if (hwloc_topology_init(t) != 0)
        return CL_ERR_NOMEM;
    hwloc_topology_set_io_types_filter(*t, opt->here ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT
                                                     : HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!opt->here && hwloc_topology_set_xml(*t, opt->file) != 0) {
        cl_set_error("%s: not a readable hwloc XML file", opt->file);
        hwloc_topology_destroy(*t);
        return CL_ERR_PARSE;
    }
    if (hwloc_topology_load(*t) != 0) {
        cl_set_error("%s: hwloc cannot load it", opt->here ? "this machine" : opt->file);
        hwloc_topology_destroy(*t);
        return CL_ERR_PARSE;
    }
    return CL_OK;
}

static void json_set(cl_json *j, const char *key, hwloc_const_bitmap_t set, cl_result rc)
{
    char buf[LAB10_LIST_LEN];
    if (rc != CL_OK) {
        cl_json_null(j, key);
        return;
    }
    hwloc_bitmap_list_snprintf(buf, sizeof buf, set);
    cl_json_string(j, key, buf);
}

static cl_result write_devices(cl_json *j, hwloc_topology_t t, const lab10_devices *d)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    char busid[32];
    if (!set)
        return CL_ERR_NOMEM;
    for (int kind = 0; kind < 2; kind++) {
        cl_json_array_start(j, kind ? "nics" : "gpus");
        for (int i = 0; i < (kind ? d->nnics : d->ngpus); i++) {
            hwloc_obj_t o = kind ? d->nic[i] : d->gpu[i];
            hwloc_bitmap_zero(set);
            cl_clear_error();
            cl_result rc = lab10_device_cpuset(t, o, set);
            busid_str(o, busid, sizeof busid);
            cl_json_object_start(j, NULL);
            cl_json_string(j, "busid", busid);
            if (kind)
                cl_json_string(j, "name", d->nic_name[i]);
            cl_json_string(j, "status", cl_result_str(rc));
            json_set(j, "cpuset", set, rc);
            cl_json_object_end(j);
        }
        cl_json_array_end(j);
    }
    hwloc_bitmap_free(set);
    return CL_OK;
}

static cl_result run_plan(const options *opt)
{
    hwloc_topology_t t;
    static lab10_devices d;
    static lab10_options o;
    hwloc_bitmap_t sets[LAB10_MAX_DEVICES];
    CL_CHECK(load_topology(opt, &t));
    cl_result rc = find_devices(t, &d);
    cl_json j;
    if (rc == CL_OK)
        rc = cl_json_open(&j, opt->json_path);
    if (rc != CL_OK) {
        hwloc_topology_destroy(t);
        return rc;
    }
    cl_json_object_start(&j, NULL);
    cl_json_string(&j, "file", opt->here ? "(this machine)" : opt->file);
    CL_CHECK(write_devices(&j, t, &d));
    int users[LAB10_MAX_DEVICES] = {0}, nranks = d.ngpus, all_ok = nranks > 0;
    cl_json_array_start(&j, "ranks");
    for (int r = 0; r < nranks; r++) {
        sets[r] = hwloc_bitmap_alloc();
        int nic = lab10_pick_nic(t, &d, r, users);
        if (nic >= 0 && nic < d.nnics)
            users[nic]++;
        else
            nic = -1;
        cl_clear_error();
        cl_result rrc = lab10_rank_cpuset(t, &d, r, nic, sets[r]);
        all_ok &= rrc == CL_OK;
        cl_json_object_start(&j, NULL);
        cl_json_int(&j, "gpu", r);
        cl_json_int(&j, "nic", nic);
        cl_json_string(&j, "nic_name", nic >= 0 ? d.nic_name[nic] : NULL);
        cl_json_string(&j, "status", cl_result_str(rrc));
        json_set(&j, "cpuset", sets[r], rrc);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    cl_result orc = CL_ERR_INVALID;
    if (all_ok) {
        cl_clear_error();
        orc = lab10_format_options(t, (hwloc_bitmap_t const *)sets, nranks, opt->host, &o);
    }
    cl_json_string(&j, "options_status", cl_result_str(orc));
    if (orc == CL_OK) {
        cl_json_object_start(&j, "options");
        const char *names[3] = {"cpulist", "numactl", "taskset"};
        for (int k = 0; k < 3; k++) {
            cl_json_array_start(&j, names[k]);
            for (int r = 0; r < nranks; r++)
                cl_json_string(&j, NULL,
                               k == 0 ? o.cpulist[r] : k == 1 ? o.numactl[r] : o.taskset[r]);
            cl_json_array_end(&j);
        }
        cl_json_string(&j, "slurm_mask", o.slurm_mask);
        cl_json_string(&j, "slurm_map", o.slurm_map);
        cl_json_string(&j, "ompi_cpuset", o.ompi_cpuset);
        cl_json_string(&j, "rankfile", o.rankfile);
        cl_json_object_end(&j);
    }
    cl_json_object_end(&j);
    for (int r = 0; r < nranks; r++)
        hwloc_bitmap_free(sets[r]);
    hwloc_topology_destroy(t);
    return cl_json_close(&j);
}

/* --- bind: a fresh thread binds with the student's code; the harness looks --- */

typedef struct bind_case {
    hwloc_bitmap_t want;   /* the set handed to the student */
    cl_result rc;
    char affinity[LAB10_LIST_LEN]; /* sched_getaffinity after the call */
    char hwloc_get[LAB10_LIST_LEN]; /* hwloc_get_cpubind(THREAD) after the call */
    char seen[LAB10_LIST_LEN];      /* CPUs sched_getcpu() reported while spinning */
    hwloc_topology_t here;
} bind_case;

static void *bind_thread(void *arg)
{
    bind_case *c = arg;
    cl_clear_error();
    c->rc = lab10_bind_here(c->want);
    hwloc_bitmap_t got = hwloc_bitmap_alloc(), seen = hwloc_bitmap_alloc();
    cpu_set_t mask;
    CPU_ZERO(&mask);
    sched_getaffinity(0, sizeof mask, &mask);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &mask))
            hwloc_bitmap_set(got, (unsigned)i);
    hwloc_bitmap_list_snprintf(c->affinity, sizeof c->affinity, got);
    hwloc_bitmap_zero(got);
    hwloc_get_cpubind(c->here, got, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_list_snprintf(c->hwloc_get, sizeof c->hwloc_get, got);
    double end = cl_wtime() + 0.03;
    volatile unsigned long spin = 0;
    while (cl_wtime() < end) {
        int cpu = sched_getcpu();
        if (cpu >= 0)
            hwloc_bitmap_set(seen, (unsigned)cpu);
        for (int k = 0; k < 2000; k++)
            spin++;
    }
    hwloc_bitmap_list_snprintf(c->seen, sizeof c->seen, seen);
    hwloc_bitmap_free(got);
    hwloc_bitmap_free(seen);
    return NULL;
}

static cl_result run_bind(const options *opt)
{
    hwloc_topology_t here;
    if (hwloc_topology_init(&here) != 0 || hwloc_topology_load(here) != 0)
        return CL_ERR_BACKEND;
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(here);
    hwloc_bitmap_t cases[LAB10_MAX_DEVICES + 4];
    int n = 0, id;
    hwloc_bitmap_foreach_begin(id, allowed) {
        if (n < LAB10_MAX_DEVICES)
            cases[n++] = hwloc_bitmap_alloc(), hwloc_bitmap_set(cases[n - 1], (unsigned)id);
    } hwloc_bitmap_foreach_end();
    cases[n++] = hwloc_bitmap_dup(allowed);
    cases[n] = hwloc_bitmap_alloc();                  /* p4d.24xlarge rank 0: 0-23,48-71 */
    hwloc_bitmap_set_range(cases[n], 0, 23), hwloc_bitmap_set_range(cases[n++], 48, 71);
    cases[n] = hwloc_bitmap_alloc();                  /* no such CPU here */
    hwloc_bitmap_set(cases[n++], 4000);
    cl_json j;
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    char buf[LAB10_LIST_LEN];
    hwloc_bitmap_list_snprintf(buf, sizeof buf, allowed);
    cl_json_string(&j, "allowed", buf);
    cl_json_array_start(&j, "cases");
    for (int i = 0; i < n; i++) {
        bind_case c = {.want = cases[i], .here = here};
        pthread_t th;
        if (pthread_create(&th, NULL, bind_thread, &c) != 0)
            return CL_ERR_BACKEND;
        pthread_join(th, NULL);
        hwloc_bitmap_list_snprintf(buf, sizeof buf, cases[i]);
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "requested", buf);
        cl_json_string(&j, "status", cl_result_str(c.rc));
        cl_json_string(&j, "affinity", c.affinity);
        cl_json_string(&j, "hwloc_cpubind", c.hwloc_get);
        cl_json_string(&j, "ran_on", c.seen);
        cl_json_object_end(&j);
        hwloc_bitmap_free(cases[i]);
    }
    cl_json_array_end(&j);
    cl_json_object_end(&j);
    hwloc_topology_destroy(here);
    return cl_json_close(&j);
}

/* --- membw: bandwidth of memory on node 0 from threads bound three ways --- */

#define MEMBW_BYTES ((size_t)64 << 20)

typedef struct membw_case {
    hwloc_topology_t here;
    hwloc_const_bitmap_t cpus;
    int student;    /* 1: bind with lab10_bind_here, 0: the harness binds */
    char *src, *dst;
    double gbps;
    cl_result rc;
} membw_case;

static void *membw_thread(void *arg)
{
    membw_case *c = arg;
    c->rc = c->student ? lab10_bind_here(c->cpus)
                       : (hwloc_set_cpubind(c->here, c->cpus, HWLOC_CPUBIND_THREAD) == 0
                              ? CL_OK : CL_ERR_BACKEND);
    memcpy(c->dst, c->src, MEMBW_BYTES / 8); /* warm up on the new CPU */
    double start = cl_wtime();
    for (int i = 0; i < 3; i++)
        memcpy(c->dst, c->src, MEMBW_BYTES);
    c->gbps = 3.0 * MEMBW_BYTES / (cl_wtime() - start) / 1e9;
    return NULL;
}

static cl_result run_membw(const options *opt)
{
    hwloc_topology_t here;
    if (hwloc_topology_init(&here) != 0 || hwloc_topology_load(here) != 0)
        return CL_ERR_BACKEND;
    int numa = hwloc_get_nbobjs_by_type(here, HWLOC_OBJ_NUMANODE);
    cl_json j;
    CL_CHECK(cl_json_open(&j, opt->json_path));
    cl_json_object_start(&j, NULL);
    cl_json_int(&j, "numa_nodes", numa);
    if (numa < 2 && !opt->force) {
        cl_json_bool(&j, "ran", 0);
        cl_json_object_end(&j);
        hwloc_topology_destroy(here);
        return cl_json_close(&j);
    }
    hwloc_obj_t n0 = hwloc_get_obj_by_type(here, HWLOC_OBJ_NUMANODE, 0);
    hwloc_obj_t n1 = hwloc_get_obj_by_type(here, HWLOC_OBJ_NUMANODE, numa > 1 ? 1 : 0);
    char *src = hwloc_alloc_membind(here, MEMBW_BYTES, n0->nodeset, HWLOC_MEMBIND_BIND,
                                    HWLOC_MEMBIND_BYNODESET);
    char *dst = hwloc_alloc_membind(here, MEMBW_BYTES, n0->nodeset, HWLOC_MEMBIND_BIND,
                                    HWLOC_MEMBIND_BYNODESET);
    if (!src || !dst)
        return CL_ERR_NOMEM;
    memset(src, 1, MEMBW_BYTES);
    memset(dst, 2, MEMBW_BYTES);
    double bw[3][64];
    cl_result student_rc = CL_OK;
    for (int r = 0; r < opt->repeats; r++) {
        for (int k = 0; k < 3; k++) { /* harness local, student, harness remote */
            membw_case c = {.here = here, .cpus = k == 2 ? n1->cpuset : n0->cpuset,
                            .student = k == 1, .src = src, .dst = dst};
            pthread_t th;
            if (pthread_create(&th, NULL, membw_thread, &c) != 0)
                return CL_ERR_BACKEND;
            pthread_join(th, NULL);
            if (k == 1 && c.rc != CL_OK)
                student_rc = c.rc;
            bw[k][r] = c.gbps;
        }
    }
    cl_json_bool(&j, "ran", 1);
    cl_json_string(&j, "student_status", cl_result_str(student_rc));
    cl_json_number_array(&j, "local_gbps", bw[0], (size_t)opt->repeats);
    cl_json_number_array(&j, "student_gbps", bw[1], (size_t)opt->repeats);
    cl_json_number_array(&j, "remote_gbps", bw[2], (size_t)opt->repeats);
    cl_json_object_end(&j);
    hwloc_free(here, src, MEMBW_BYTES);
    hwloc_free(here, dst, MEMBW_BYTES);
    hwloc_topology_destroy(here);
    return cl_json_close(&j);
}

static int usage(void)
{
    fprintf(stderr, "usage: lab10 plan FILE.xml|--here [--host H] --json OUT\n"
                    "       lab10 bind --json OUT\n"
                    "       lab10 membw [--force] [--repeats R] --json OUT\n");
    return 2;
}

int main(int argc, char **argv)
{
    options opt = {.host = "localhost", .repeats = 5};
    if (argc < 2)
        return usage();
    opt.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--json") == 0 && more)
            opt.json_path = argv[++i];
        else if (strcmp(a, "--host") == 0 && more)
            opt.host = argv[++i];
        else if (strcmp(a, "--repeats") == 0 && more)
            opt.repeats = atoi(argv[++i]);
        else if (strcmp(a, "--here") == 0)
            opt.here = 1;
        else if (strcmp(a, "--force") == 0)
            opt.force = 1;
        else if (a[0] != '-' && !opt.file)
            opt.file = a;
        else
            return usage();
    }
    if (opt.repeats < 1 || opt.repeats > 64)
        return usage();
    cl_result rc;
    if (strcmp(opt.mode, "plan") == 0 && (opt.file != NULL) != opt.here)
        rc = run_plan(&opt);
    else if (strcmp(opt.mode, "bind") == 0)
        rc = run_bind(&opt);
    else if (strcmp(opt.mode, "membw") == 0)
        rc = run_membw(&opt);
    else
        return usage();
    if (rc != CL_OK)
        fprintf(stderr, "lab10 %s: %s%s%s\n", opt.mode, cl_result_str(rc),
                cl_last_error()[0] ? ": " : "", cl_last_error());
    return cl_exit_status(rc);
}
