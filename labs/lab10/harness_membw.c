/* harness_membw.c: lab 10's membw mode: memory bandwidth on NUMA node 0's memory, the
 * harness bound to node 0 or node 1 against the student's binding.
 */
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "lab10_harness.h"

#define MEMBW_BYTES ((size_t)64 << 20)
#define MEMBW_REPS  4

/* GB/s of the harness's own copy of src to dst, bound to node's CPUs. */
static double harness_copy(hwloc_topology_t t, hwloc_obj_t node, void *dst, const void *src)
{
    hwloc_set_cpubind(t, node->cpuset, HWLOC_CPUBIND_THREAD);
    double t0 = cl_wtime();
    for (int i = 0; i < MEMBW_REPS; i++)
        memcpy(dst, src, MEMBW_BYTES);
    return (double)MEMBW_BYTES * MEMBW_REPS / (cl_wtime() - t0) / 1e9;
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
cl_result membw_mode(cl_run *run, cl_comm *c)
{
    int repeats = cl_run_opts(run)->repeats > 64 ? 64 : cl_run_opts(run)->repeats;
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0)
        return CL_ERR_BACKEND;
    int nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    cl_report_int(run, "numa_nodes", nodes);
    int force;
    CL_CHECK(cl_opt_int(run, "force", 0, 1, &force));
    if (nodes < 2 && !force) {
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
