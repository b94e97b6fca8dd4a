/* fibers.c: the race check's two ends of lab 09's rings in one thread, as fibers that take turns.
 *
 * ThreadSanitizer sees two threads whose only synchronisation is the rings'
 * own, so a missing acquire or release is a data race there, whatever the
 * turns were. The fibers' bookkeeping is not instrumented (NOTSAN): it is
 * not the student's code.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "exchange.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

extern void (*lab09_wait_hook)(void); /* ring.c */

#define NOTSAN      __attribute__((no_sanitize_thread))
#define FIBER_STACK ((size_t)256 << 10)
#define STALLED     1000000 /* waits in a row after the other end finished: a deadlock */

static struct {
    race_args *a;
    ucontext_t ctx[2];
    void *tsan[2];
    int current, done[2], over, stalled;
    cl_result rc[2];
    char error[2][256];
    jmp_buf out;
} F;

/* Hand over to fiber `to`; with sync, everything this fiber did happens
 * before what `to` does next. */
NOTSAN static void switch_to(int to, int sync)
{
    int from = F.current;
    F.current = to;
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(F.tsan[to], sync ? 0 : __tsan_switch_to_fiber_no_sync);
#else
    (void)sync;
#endif
    swapcontext(&F.ctx[from], &F.ctx[to]);
}

NOTSAN static void fail(int id, cl_result rc, const char *why)
{
    size_t i = 0;
    for (; why[i] && i + 1 < sizeof F.error[0]; i++)
        F.error[id][i] = why[i];
    F.error[id][i] = '\0';
    F.rc[id] = rc;
}

/* A wait of the running end: the other end's turn, unless it has finished. */
NOTSAN static void other_end(void)
{
    int me = F.current;
    if (!F.done[1 - me]) {
        F.stalled = 0;
        switch_to(1 - me, 0);
        return;
    }
    if (++F.stalled <= STALLED)
        return;
    fail(me, CL_ERR_TIMEOUT, "waits for a message the other end never sends (it has finished)");
    F.done[me] = 1;
    if (me == 0)
        longjmp(F.out, 1); /* back to race(), on this same stack */
    switch_to(0, 1);       /* fiber 1: for good */
}

NOTSAN static void run_side(int id)
{
    race_args *a = F.a;
    lab09_ring tx, rx;
    cl_result rc =
        lab09_exchange(lab09_ring_of(&a->L, id, &tx), lab09_ring_of(&a->L, 1 - id, &rx),
                       a->sbuf[id], a->rbuf[id], a->n, a->size[id], a->size[1 - id], NULL);
    if (rc != CL_OK)
        fail(id, rc, cl_last_error());
    F.done[id] = 1;
}

NOTSAN static void fiber1(void)
{
    run_side(1);
    while (!F.done[0])
        switch_to(0, 0);
    F.over = 1;
    switch_to(0, 1); /* for good, with all this end did */
}

NOTSAN cl_result lab09_race_ends(race_args *args)
{
    void *stack = malloc(FIBER_STACK);
    if (!stack) {
        cl_set_error("no memory for the second end's stack");
        return CL_ERR_NOMEM;
    }
    memset(&F, 0, sizeof F);
    F.a = args;
    getcontext(&F.ctx[1]);
    F.ctx[1].uc_stack.ss_sp = stack;
    F.ctx[1].uc_stack.ss_size = FIBER_STACK;
    makecontext(&F.ctx[1], fiber1, 0);
#if defined(__SANITIZE_THREAD__)
    F.tsan[0] = __tsan_get_current_fiber();
    F.tsan[1] = __tsan_create_fiber(0);
#endif
    lab09_wait_hook = other_end;
    if (setjmp(F.out) == 0) {
        run_side(0);
        while (!F.done[1])
            switch_to(1, 0);
        if (!F.over && F.rc[1] == CL_OK)
            switch_to(1, 0); /* fiber 1 hands back for good */
    }
    lab09_wait_hook = NULL;
#if defined(__SANITIZE_THREAD__)
    __tsan_destroy_fiber(F.tsan[1]);
#endif
    free(stack);
    for (int pass = 0; pass < 2; pass++) /* a real error before a wait it caused */
        for (int i = 0; i < 2; i++)
            if (F.rc[i] != CL_OK && (pass || F.rc[i] != CL_ERR_TIMEOUT)) {
                cl_set_error("end %d: %s", i, F.error[i]);
                return F.rc[i];
            }
    return CL_OK;
}
