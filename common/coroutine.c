/* coroutine.c: stacks and switches of coroutine.h. */
#include "coroutine.h"

#include <stdint.h>
#include <sys/mman.h>

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define FAST_SWITCH 1
void cl_coro_swap_sp(void **save_sp, void *to_sp);
__asm__(".text\n"
        ".globl cl_coro_swap_sp\n"
        ".type cl_coro_swap_sp,@function\n"
        "cl_coro_swap_sp:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size cl_coro_swap_sp, .-cl_coro_swap_sp\n");
#else
#define FAST_SWITCH 0
#endif

cl_result cl_coro_start(cl_coro *c, size_t stack_bytes, void (*entry)(void))
{
    if (!c->stack || c->stack_bytes != stack_bytes) {
        cl_coro_free(c);
        void *s = mmap(NULL, stack_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (s == MAP_FAILED) {
            cl_set_error("cannot map a stack of %zu bytes", stack_bytes);
            return CL_ERR_NOMEM;
        }
        mprotect(s, 4096, PROT_NONE);
        c->stack = s;
        c->stack_bytes = stack_bytes;
    }
#if FAST_SWITCH
    /* A frame that cl_coro_swap_sp "returns" into entry from: six callee-saved
     * registers, entry's address, then a dummy return address, leaving
     * rsp = 8 mod 16 at entry's first instruction, as after a call. */
    uintptr_t top = ((uintptr_t)c->stack + stack_bytes) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = NULL;
    *--sp = (void *)(uintptr_t)entry;
    for (int k = 0; k < 6; k++)
        *--sp = NULL;
    c->sp = sp;
#else
    getcontext(&c->ctx);
    c->ctx.uc_stack.ss_sp = c->stack;
    c->ctx.uc_stack.ss_size = stack_bytes;
    c->ctx.uc_link = NULL;
    makecontext(&c->ctx, entry, 0);
#endif
    return CL_OK;
}

void cl_coro_switch(cl_coro *from, cl_coro *to)
{
#if FAST_SWITCH
    cl_coro_swap_sp(&from->sp, to->sp);
#else
    swapcontext(&from->ctx, &to->ctx);
#endif
}

void cl_coro_free(cl_coro *c)
{
    if (c->stack)
        munmap(c->stack, c->stack_bytes);
    c->stack = NULL;
    c->stack_bytes = 0;
}
