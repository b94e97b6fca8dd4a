/* lab10.c: lab 10, binding each rank to the CPUs next to its GPU and NIC.
 *
 * You find, in recorded hwloc topologies of real GPU servers, the cpuset
 * closest to each GPU and NIC, turn it into the options of numactl, taskset,
 * Open MPI and Slurm, and bind for real on this machine. Read
 * labs/lab10/README.md first; the TODOs below are in the order of its
 * sections, and labs/lab10/answers.txt holds the answers of its last one.
 * Build with `make lab10`, grade with `./grade lab10`.
 */
#include <stdio.h>
#include <string.h>

#include "lab10.h"

cl_result lab10_device_cpuset(hwloc_topology_t topo, hwloc_obj_t dev, hwloc_bitmap_t out)
{
    /* BEGIN SOLUTION */
    if (!dev) {
        cl_set_error("no device");
        return CL_ERR_INVALID;
    }
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, dev);
    if (!anc || !anc->cpuset) {
        cl_set_error("device has no non-I/O ancestor");
        return CL_ERR_INVALID;
    }
    hwloc_bitmap_copy(out, anc->cpuset);
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab10) 1: the CPUs close to an I/O device (handout section 1).
    //   An I/O object carries no cpuset; the one that counts is that of its
    //   nearest ancestor that is not an I/O object. Copy it into out.
    //   No device or no such ancestor: cl_set_error() and CL_ERR_INVALID.
    (void)topo, (void)dev, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Parent steps from a and from b up to their closest common ancestor. */
static int hops_between(hwloc_obj_t a, hwloc_obj_t b)
{
    int up_a = 0;
    for (hwloc_obj_t x = a; x; x = x->parent, up_a++) {
        int up_b = 0;
        for (hwloc_obj_t y = b; y; y = y->parent, up_b++)
            if (x == y)
                return up_a + up_b;
    }
    return 1 << 20; /* different topologies: never the closest */
}
/* END SOLUTION */

int lab10_pick_nic(hwloc_topology_t topo, const lab10_devices *devs, int gpu, const int *users)
{
    /* BEGIN SOLUTION */
    (void)topo;
    int best = -1, best_hops = 0;
    for (int n = 0; n < devs->nnics; n++) {
        int h = hops_between(devs->gpu[gpu], devs->nic[n]);
        if (best < 0 || h < best_hops || (h == best_hops && users[n] < users[best])) {
            best = n;
            best_hops = h;
        }
    }
    return best;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab10) 2: the NIC closest to the GPU (section 1): the fewest parent
    //   steps from both up to their closest common ancestor; ties as lab10.h
    //   says. I/O objects have no depth hwloc's ancestor helpers can use.
    //   -1 when the server has no NIC.
    (void)topo, (void)devs, (void)gpu, (void)users;
    return -1;
    END SKELETON */
}

cl_result lab10_rank_cpuset(hwloc_topology_t topo, const lab10_devices *devs, int gpu, int nic,
                            hwloc_bitmap_t out)
{
    /* BEGIN SOLUTION */
    if (gpu < 0 || gpu >= devs->ngpus) {
        cl_set_error("no GPU %d", gpu);
        return CL_ERR_INVALID;
    }
    CL_CHECK(lab10_device_cpuset(topo, devs->gpu[gpu], out));
    if (nic < 0)
        return CL_OK;
    hwloc_bitmap_t near = hwloc_bitmap_alloc();
    if (!near)
        return CL_ERR_NOMEM;
    cl_result rc = lab10_device_cpuset(topo, devs->nic[nic], near);
    if (rc == CL_OK && hwloc_bitmap_intersects(out, near))
        hwloc_bitmap_and(out, out, near);
    hwloc_bitmap_free(near);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab10) 3: one rank's cpuset (section 1): the GPU's CPUs, narrowed to
    //   those it shares with its NIC when there is a NIC and they share any.
    //   Free every bitmap you allocate.
    (void)topo, (void)devs, (void)gpu, (void)nic, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

/* BEGIN SOLUTION */
/* Append printf-style text to buf of size len; CL_ERR_INVALID when it does not fit. */
static cl_result append(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(buf);
    int n = snprintf(buf + used, len - used, fmt, a, b);
    if (n < 0 || (size_t)n >= len - used) {
        cl_set_error("binding option longer than %zu characters", len);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* The k-th CPU (0-based, wrapping around) of set, or -1 for an empty set. */
static int kth_cpu(hwloc_const_bitmap_t set, int k)
{
    int weight = hwloc_bitmap_weight(set);
    if (weight <= 0)
        return -1;
    int id = hwloc_bitmap_first(set);
    for (int i = 0; i < k % weight; i++)
        id = hwloc_bitmap_next(set, id);
    return id;
}
/* END SOLUTION */

cl_result lab10_format_options(hwloc_topology_t topo, hwloc_bitmap_t const *sets, int nranks,
                               const char *host, lab10_options *out)
{
    /* BEGIN SOLUTION */
    memset(out, 0, sizeof *out);
    if (nranks < 1 || nranks > LAB10_MAX_DEVICES) {
        cl_set_error("nranks %d out of range", nranks);
        return CL_ERR_INVALID;
    }
    out->nranks = nranks;
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    if (!all || !nodes)
        return CL_ERR_NOMEM;
    /* shorter than the fields they are printed into, with their command around them */
    char list[LAB10_LIST_LEN / 2 - 32], nodelist[LAB10_LIST_LEN / 2 - 32], mask[LAB10_LIST_LEN];
    char id[16];
    strcpy(out->slurm_mask, "--cpu-bind=mask_cpu:");
    strcpy(out->slurm_map, "--cpu-bind=map_cpu:");
    cl_result rc = CL_OK;
    for (int r = 0; r < nranks && rc == CL_OK; r++) {
        hwloc_bitmap_list_snprintf(list, sizeof list, sets[r]);
        hwloc_cpuset_to_nodeset(topo, sets[r], nodes);
        hwloc_bitmap_list_snprintf(nodelist, sizeof nodelist, nodes);
        hwloc_bitmap_taskset_snprintf(mask, sizeof mask, sets[r]);
        hwloc_bitmap_or(all, all, sets[r]);
        snprintf(out->cpulist[r], LAB10_LIST_LEN, "%s", list);
        snprintf(out->taskset[r], LAB10_LIST_LEN, "taskset -c %s", list);
        snprintf(out->numactl[r], LAB10_LIST_LEN, "numactl --physcpubind=%s --membind=%s", list,
                 nodelist);
        /* map_cpu gives one CPU per rank: ranks sharing a set take its CPUs in turn */
        int earlier = 0;
        for (int q = 0; q < r; q++)
            earlier += hwloc_bitmap_isequal(sets[q], sets[r]);
        snprintf(id, sizeof id, "%d", kth_cpu(sets[r], earlier));
        const char *sep = r ? "," : "";
        rc = append(out->slurm_mask, LAB10_JOB_LEN, "%s%s", sep, mask);
        if (rc == CL_OK)
            rc = append(out->slurm_map, LAB10_JOB_LEN, "%s%s", sep, id);
        if (rc == CL_OK) {
            char line[64 + 32];
            snprintf(line, sizeof line, "rank %d=%.32s slot=", r, host);
            rc = append(out->rankfile, LAB10_JOB_LEN, "%s%s\n", line, list);
        }
    }
    hwloc_bitmap_list_snprintf(list, sizeof list, all);
    snprintf(out->ompi_cpuset, LAB10_JOB_LEN, "--cpu-set %s", list);
    /* ppr:N:numa places N ranks on each NUMA node in turn: N is the most ranks
     * whose sets lie inside one node */
    int per_node = 0;
    for (hwloc_obj_t node = NULL;
         (node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node));) {
        int k = 0;
        for (int r = 0; r < nranks; r++)
            k += hwloc_bitmap_isincluded(sets[r], node->cpuset);
        per_node = k > per_node ? k : per_node;
    }
    if (per_node > 0)
        snprintf(out->ompi_map, LAB10_LIST_LEN, "--map-by ppr:%d:numa --bind-to core", per_node);
    else
        snprintf(out->ompi_map, LAB10_LIST_LEN, "--bind-to none");
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(nodes);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab10) 4: the binding options of numactl, taskset, Open MPI and Slurm
    //   (section 2 gives every format, character for character; lab10.h gives the
    //   fields). Too long for a field: cl_set_error() and CL_ERR_INVALID.
    (void)topo, (void)sets, (void)nranks, (void)host, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab10_bind_here(hwloc_const_bitmap_t set)
{
    /* BEGIN SOLUTION */
    hwloc_topology_t here;
    if (hwloc_topology_init(&here) != 0)
        return CL_ERR_NOMEM;
    cl_result rc = CL_OK;
    hwloc_bitmap_t use = hwloc_bitmap_dup(set);
    if (!use || hwloc_topology_load(here) != 0) {
        cl_set_error("cannot load this machine's topology");
        rc = CL_ERR_BACKEND;
    } else if (!hwloc_topology_is_thissystem(here)) {
        cl_set_error("the loaded topology is not this machine's: binding would do nothing");
        rc = CL_ERR_UNSUPPORTED;
    } else {
        hwloc_bitmap_and(use, use, hwloc_topology_get_allowed_cpuset(here));
        if (hwloc_bitmap_iszero(use)) {
            cl_set_error("none of the CPUs exists on this machine");
            rc = CL_ERR_INVALID;
        } else if (hwloc_set_cpubind(here, use, HWLOC_CPUBIND_THREAD) != 0) {
            cl_set_error("hwloc_set_cpubind failed");
            rc = CL_ERR_BACKEND;
        }
    }
    hwloc_bitmap_free(use);
    hwloc_topology_destroy(here);
    return rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab10) 5: bind the calling thread, for real (section 3), to the CPUs
    //   of set that exist on this machine. Beware of a topology that is not this
    //   machine's: binding through it succeeds and does nothing. None of the
    //   CPUs here: CL_ERR_INVALID; hwloc refuses: CL_ERR_BACKEND. Release what
    //   you load or allocate.
    (void)set;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
