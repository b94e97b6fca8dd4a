/* test_boundary.c: the harness calling a student program: results, faults, rules, limits.
 *
 * The student program is tests/unit/student/probe.c, started by the harness as every lab's
 * is (seccomp, its own process). Each case runs one entry on the solo backend (one rank) or
 * on two simulated ranks, and checks what the harness reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "boundary/boundary.h"
#include "deadline.h"
#include "launch.h"

typedef struct probe_args { /* as in student/probe.c */
    int x, y;
    void *buf;
    size_t bytes;
} probe_args;

typedef struct scene {
    const char *entry;
    unsigned allow;
    int ranks; /* 1: solo, 2: sim */
    int x;
    int swap; /* rank 0 gets rank 1's buffer */
    void *bufs[2];
    cl_result rc[2];
    cl_call_result res[2];
    probe_args out[2];
    cl_trace_event trace[2][8];
    int ntrace[2];
} scene;

static char program[600];

static cl_result body(cl_comm *c, void *arg)
{
    scene *s = arg;
    int r = cl_comm_rank(c);
    if (r == 0)
        CL_CHECK(cl_student_hello(s->ranks > 1 ? CL_WIRE_SIM : CL_WIRE_CPU, 0, s->ranks,
                                  s->ranks > 1 ? 0 : CL_WIRE_HOST_BUFFERS));
    CL_CHECK(cl_mem_alloc(c, 64, &s->bufs[r]));
    CL_CHECK(cl_barrier(c));
    probe_args a = {.x = s->x, .buf = s->bufs[s->swap && r == 0 ? 1 : r], .bytes = 64};
    cl_call call = {.entry = s->entry,
                    .args = &a,
                    .args_bytes = sizeof a,
                    .out = &a,
                    .out_bytes = sizeof a,
                    .allow = s->allow};
    s->rc[r] = cl_student_call(c, &call, &s->res[r]);
    s->out[r] = a;
    int n;
    const cl_trace_event *ev = cl_student_trace(c, &n);
    s->ntrace[r] = n < 8 ? n : 8;
    if (s->ntrace[r] > 0)
        memcpy(s->trace[r], ev, (size_t)s->ntrace[r] * sizeof *ev);
    return CL_OK;
}

static void play(scene *s)
{
    cl_student_opts so = {.program = program, .nlocal = s->ranks};
    assert_int_equal(cl_student_start(&so), CL_OK);
    cl_launch_opts lo = {.backend = "sim", .nranks = s->ranks, .system = "dgx-a100"};
    cl_result rc = s->ranks > 1 ? cl_sim_launch(&lo, body, s) : cl_solo_launch(&lo, body, s);
    cl_student_stop();
    if (rc != CL_OK)
        print_error("launch: %s\n", cl_last_error());
    assert_int_equal(rc, CL_OK);
}

static void test_calls_and_results(void **state)
{
    (void)state;
    scene s = {.entry = "echo", .allow = CL_ALLOW_ALL, .ranks = 1, .x = 21};
    play(&s);
    assert_int_equal(s.res[0].status, CL_OK);
    assert_int_equal(s.out[0].y, 42);
    scene t = {.entry = "echo", .allow = CL_ALLOW_ALL, .ranks = 2, .x = 5};
    play(&t);
    assert_int_equal(t.out[0].y, 10);
    assert_int_equal(t.out[1].y, 11);
    scene u = {.entry = "fail", .allow = CL_ALLOW_ALL, .ranks = 1};
    play(&u);
    assert_int_equal(u.rc[0], CL_OK); /* the harness did its part */
    assert_int_equal(u.res[0].status, CL_ERR_MISMATCH);
    assert_string_equal(u.res[0].error, "a reason of my own");
}

static void expect_death(const char *entry, int ranks, const char *words)
{
    scene s = {.entry = entry, .allow = CL_ALLOW_ALL, .ranks = ranks};
    play(&s);
    assert_int_equal(s.rc[0], CL_ERR_CRASHED);
    assert_int_equal(s.res[0].status, CL_ERR_CRASHED);
    if (!strstr(s.res[0].error, words))
        print_error("'%s' not in: %s\n", words, s.res[0].error);
    assert_non_null(strstr(s.res[0].error, words));
}

static void test_faults_are_named(void **state)
{
    (void)state;
    /* A sanitized student program runs unfiltered and the sanitizer reports the faults. */
    if (getenv("COMMLAB_SANITIZE")) {
        skip();
        return;
    }
    expect_death("crash", 1, "NULL pointer");
    expect_death("open", 1, "openat");
    expect_death("spawn", 1, "clone");
    expect_death("deref", 2, "device buffer");
}

static void test_deadline(void **state)
{
    (void)state;
    cl_deadline_set(1.0);
    scene s = {.entry = "spin", .allow = CL_ALLOW_ALL, .ranks = 1};
    play(&s);
    cl_deadline_set(0);
    assert_int_equal(s.rc[0], CL_ERR_TIMEOUT);
    assert_non_null(strstr(s.res[0].error, "deadline"));
}

static void test_rules(void **state)
{
    (void)state;
    scene s = {.entry = "download", .allow = CL_ALLOW_COLLECTIVE, .ranks = 2};
    play(&s);
    assert_int_equal(s.res[0].status, CL_ERR_FORBIDDEN);
    assert_string_equal(s.res[0].forbidden, "cl_mem_download");
    scene t = {.entry = "pass", .allow = CL_ALLOW_P2P, .ranks = 2};
    play(&t);
    assert_int_equal(t.res[0].status, CL_OK);
    assert_int_equal(t.res[1].status, CL_OK);
    assert_int_equal(t.trace[0][0].op, CL_WOP_ISEND); /* a cl_send is a post, then a wait */
    assert_int_equal(t.trace[0][0].peer, 1);
    assert_int_equal(t.trace[0][0].bytes, 64);
    assert_int_equal(t.trace[1][0].op, CL_WOP_IRECV);
    scene m = {.entry = "allocfree", .allow = CL_ALLOW_MEMORY, .ranks = 1};
    play(&m);
    assert_int_equal(m.res[0].status, CL_OK);
    assert_int_equal(m.trace[0][0].op, CL_WOP_ALLOC); /* both carry the size: memory in use */
    assert_int_equal(m.trace[0][0].bytes, 100);
    assert_int_equal(m.trace[0][1].op, CL_WOP_FREE);
    assert_int_equal(m.trace[0][1].bytes, 100);
    scene f = {.entry = "freeforeign", .allow = CL_ALLOW_MEMORY, .ranks = 1};
    play(&f);
    assert_int_equal(f.res[0].status, CL_ERR_INVALID);
    assert_non_null(strstr(f.res[0].error, "not allocated by your code"));
    scene u = {.entry = "pass", .allow = CL_ALLOW_P2P, .ranks = 2, .x = 1};
    play(&u);
    assert_int_equal(u.res[0].status, CL_ERR_INVALID);
    assert_non_null(strstr(u.res[0].error, "past the end"));
    scene v = {.entry = "inflight", .allow = CL_ALLOW_P2P, .ranks = 2};
    play(&v);
    assert_int_equal(v.res[0].status, CL_ERR_INVALID);
    assert_non_null(strstr(v.res[0].error, "in flight"));
    scene w = {.entry = "other", .allow = CL_ALLOW_ALL, .ranks = 2, .swap = 1};
    play(&w);
    assert_int_equal(w.res[0].status, CL_ERR_INVALID);
    assert_non_null(strstr(w.res[0].error, "belongs to rank 1"));
}

int main(void)
{
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(program, sizeof program, "%s/probe-student", self);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_and_results),
        cmocka_unit_test(test_faults_are_named),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
