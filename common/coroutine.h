/* coroutine.h: many ranks on one thread, each on its own stack, switched by hand.
 *
 * The simulator runs every simulated rank this way (p2p_sim.c), and so does the
 * student's program (student/main.c). A switch happens at every wake-up of a
 * rank, so it must be cheap: ucontext's swapcontext saves and restores the
 * signal mask, two system calls per switch. On x86-64 (without sanitizers,
 * which must see every stack switch) only the callee-saved registers and the
 * stack pointer are exchanged; elsewhere ucontext does it.
 */
#ifndef COMMLAB_COROUTINE_H
#define COMMLAB_COROUTINE_H

#include <stddef.h>
#include <ucontext.h>

#include "result.h"

typedef struct cl_coro {
    void *sp;       /* saved stack pointer (the register-only switch) */
    ucontext_t ctx; /* saved context (elsewhere) */
    void *stack;    /* NULL for the thread's own stack: the scheduler */
    size_t stack_bytes;
} cl_coro;

/* Give c a fresh stack of stack_bytes (a guard page at its bottom, so that an
 * overflow faults instead of corrupting its neighbour) on which the next switch
 * to c starts entry(). entry must never return: it switches away for good.
 * May be called again on the same c to restart it (the stack is kept). */
cl_result cl_coro_start(cl_coro *c, size_t stack_bytes, void (*entry)(void));

/* Save the running context in from and resume to. */
void cl_coro_switch(cl_coro *from, cl_coro *to);

/* Release c's stack. */
void cl_coro_free(cl_coro *c);

#endif /* COMMLAB_COROUTINE_H */
