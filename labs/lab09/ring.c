/* ring.c: lab 09's ring layout in shared memory and the wait-loop back-off. */
#include <sched.h>

#include "lab09.h"

_Static_assert(offsetof(lab09_ctrl, tail) == LAB09_LINE, "head and tail share a cache line");
_Static_assert(sizeof(lab09_ctrl) == 2 * LAB09_LINE, "control block is two cache lines");
_Static_assert(offsetof(lab09_slot, data) == LAB09_LINE, "payload starts on its own line");

void lab09_ring_map(lab09_ring *r, void *mem, uint64_t nslots, size_t chunk)
{
    r->ctrl = mem;
    r->slots = (unsigned char *)mem + sizeof(lab09_ctrl);
    r->nslots = nslots;
    r->chunk = chunk;
    r->stride = lab09_slot_stride(chunk);
}

/* Set while the race check runs both ends of the rings in one thread, taking
 * turns (fibers.c): a wait hands over to the other end there. */
void (*lab09_wait_hook)(void);

void lab09_backoff(unsigned *idle)
{
    if (lab09_wait_hook) {
        lab09_wait_hook();
        return;
    }
    if (++*idle < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    *idle = 32; /* after a yield, spin a little again before the next one */
    sched_yield();
}
