/* harness_rings.c: lab 09's rings as the harness lays them out: their shape checked, their
 * counters started where the mode wants them, in the region the ranks share; and the
 * numeric options that shape them (--nslots, --chunk, --messages).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "lab09_harness.h"

layout rings; /* this process's, once laid out */

cl_result rings_check(uint64_t nslots, size_t chunk, size_t budget)
{
    if (nslots < 1 || (nslots & (nslots - 1)) || nslots > 4096 || chunk < 1 || chunk > budget ||
        lab09_ring_bytes(nslots, chunk) > budget) {
        cl_set_error("a ring of %llu slots of %zu B: the slots must be a power of two up to "
                     "4096, and the ring (%zu B) at most %zu B",
                     (unsigned long long)nslots, chunk,
                     nslots <= 4096 && chunk <= budget ? lab09_ring_bytes(nslots, chunk) : 0,
                     budget);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* Every ring empty, its counters at start. */
void rings_reset(int nrings, uint64_t start)
{
    for (int k = 0; k < nrings; k++) {
        lab09_ctrl *ctl = (lab09_ctrl *)(rings.base + (size_t)k * rings.ring_bytes);
        atomic_store_explicit(&ctl->head, start, memory_order_relaxed);
        atomic_store_explicit(&ctl->tail, start, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_seq_cst);
}

/* nrings rings of at most `budget` bytes in the region the ranks share, in
 * the shape nslots x chunk, their counters at start; every rank calls it. */
cl_result rings_open(cl_comm *c, int nrings, size_t budget, uint64_t nslots, size_t chunk,
                     uint64_t start)
{
    void *base;
    CL_CHECK(rings_check(nslots, chunk, budget));
    CL_CHECK(cl_shared_region(c, budget * (size_t)nrings, &base));
    rings = (layout){.base = base, .nslots = nslots, .chunk = chunk, .ring_bytes = budget};
    if (cl_comm_rank(c) == 0)
        rings_reset(nrings, start);
    return cl_barrier(c);
}

uint64_t opt_u64(cl_run *run, const char *name, uint64_t fallback)
{
    const char *v = cl_opt(run, name);
    return v && *v ? strtoull(v, NULL, 0) : fallback;
}
