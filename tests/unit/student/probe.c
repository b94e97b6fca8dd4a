/* probe.c: a student program for test_boundary: entries that behave well and badly. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>

#include "student/student.h"

typedef struct probe_args {
    int x;     /* in */
    int y;     /* out */
    void *buf; /* a buffer of the harness */
    size_t bytes;
} probe_args;

static cl_result echo(cl_comm *c, void *args)
{
    probe_args *a = args;
    a->y = 2 * a->x + cl_comm_rank(c);
    return CL_OK;
}

static cl_result fail(cl_comm *c, void *args)
{
    (void)c, (void)args;
    cl_set_error("a reason of my own");
    return CL_ERR_MISMATCH;
}

static cl_result crash(cl_comm *c, void *args)
{
    (void)c;
    probe_args *a = args;
    volatile int *null = (volatile int *)(uintptr_t)(a->x * 8); /* x is 0: a NULL pointer */
    *null = 1;
    return CL_OK;
}

static cl_result open_file(cl_comm *c, void *args)
{
    (void)c, (void)args;
    FILE *f = fopen("/etc/hostname", "r");
    if (f)
        fclose(f);
    return CL_OK;
}

static cl_result spawn(cl_comm *c, void *args)
{
    (void)c, (void)args;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    return CL_OK;
}

static cl_result spin(cl_comm *c, void *args)
{
    (void)c, (void)args;
    for (volatile unsigned long i = 0;; i++)
        ;
    return CL_OK;
}

static cl_result deref(cl_comm *c, void *args)
{
    (void)c;
    probe_args *a = args;
    a->y = *(volatile char *)a->buf;
    return CL_OK;
}

static cl_result download(cl_comm *c, void *args)
{
    probe_args *a = args;
    char tmp[16];
    return cl_mem_download(c, tmp, a->buf, sizeof tmp);
}

/* Rank 0 sends bytes of buf to rank 1, past the end when x != 0. */
static cl_result pass(cl_comm *c, void *args)
{
    probe_args *a = args;
    size_t n = a->bytes + (a->x ? 1 : 0);
    if (cl_comm_rank(c) == 0)
        return cl_send(c, a->buf, n, 1);
    return cl_recv(c, a->buf, n, 0);
}

static cl_result leave_in_flight(cl_comm *c, void *args)
{
    probe_args *a = args;
    cl_request r;
    if (cl_comm_rank(c) == 0)
        return cl_isend(c, a->buf, a->bytes, 1, &r);
    return cl_recv(c, a->buf, a->bytes, 0);
}

static cl_result other_rank(cl_comm *c, void *args)
{
    (void)c;
    probe_args *a = args; /* rank 1's buffer, used by rank 0 */
    cl_comm *me = c;
    return cl_copy_local(me, (char *)a->buf + 8, a->buf, 4);
}

static cl_result alloc_free(cl_comm *c, void *args)
{
    (void)args;
    void *p;
    CL_CHECK(cl_mem_alloc(c, 100, &p));
    return cl_mem_free(c, p);
}

static cl_result free_foreign(cl_comm *c, void *args)
{
    probe_args *a = args; /* the harness's buffer */
    return cl_mem_free(c, a->buf);
}

CL_STUDENT_ENTRIES({"echo", echo}, {"fail", fail}, {"crash", crash}, {"open", open_file},
                   {"spawn", spawn}, {"spin", spin}, {"deref", deref}, {"download", download},
                   {"pass", pass}, {"inflight", leave_in_flight}, {"other", other_rank},
                   {"allocfree", alloc_free}, {"freeforeign", free_foreign});
