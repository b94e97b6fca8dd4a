/* test_shm.c: cmocka tests of common/shm: unique names, sharing, and nothing left in /dev/shm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm.h"

static int exists(const char *name)
{
    char path[CL_SHM_NAME_MAX + 16];
    snprintf(path, sizeof path, "/dev/shm%.127s", name);
    return access(path, F_OK) == 0;
}

static void test_create_attach_share(void **state)
{
    (void)state;
    cl_shm a, b;
    assert_int_equal(cl_shm_create(&a, "unit", 1 << 16), CL_OK);
    assert_true(exists(a.name));
    assert_non_null(strstr(a.name, cl_shm_prefix()));
    assert_int_equal(((unsigned char *)a.base)[12345], 0); /* zeroed */
    assert_int_equal(cl_shm_attach(&b, a.name, 1 << 16), CL_OK);
    memcpy((char *)a.base + 100, "hello", 6);
    assert_string_equal((char *)b.base + 100, "hello");
    assert_int_equal(cl_shm_unlink(&a), CL_OK);
    assert_false(exists(a.name));
    /* mappings outlive the name */
    memcpy((char *)b.base + 200, "still", 6);
    assert_string_equal((char *)a.base + 200, "still");
    assert_int_equal(cl_shm_detach(&b), CL_OK);
    assert_int_equal(cl_shm_detach(&a), CL_OK);
    assert_int_equal(cl_shm_detach(&a), CL_OK); /* twice is fine */
}

static void test_names_unique(void **state)
{
    (void)state;
    cl_shm s[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(cl_shm_create(&s[i], "uniq", 4096), CL_OK);
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            assert_string_not_equal(s[i].name, s[j].name);
    char pid[32];
    snprintf(pid, sizeof pid, "-%ld-", (long)getpid());
    assert_non_null(strstr(s[0].name, pid));
    for (int i = 0; i < 4; i++) {
        assert_int_equal(cl_shm_detach(&s[i]), CL_OK);
        assert_false(exists(s[i].name));
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    cl_shm s;
    assert_int_equal(cl_shm_create(&s, "unit", 0), CL_ERR_INVALID);
    assert_int_equal(cl_shm_create(&s, "bad/label", 4096), CL_ERR_INVALID);
    assert_int_equal(cl_shm_create(&s, NULL, 4096), CL_ERR_INVALID);
    assert_int_equal(cl_shm_attach(&s, "/commlab-does-not-exist-xyz", 4096), CL_ERR_IO);
    cl_shm a;
    assert_int_equal(cl_shm_create(&a, "small", 4096), CL_OK);
    assert_int_equal(cl_shm_attach(&s, a.name, 1 << 20), CL_ERR_IO); /* larger than it is */
    assert_int_equal(cl_shm_detach(&a), CL_OK);
    cl_shm zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(cl_shm_detach(&zero), CL_OK);
}

static void test_tag_in_prefix(void **state)
{
    (void)state;
    setenv("COMMLAB_SHM_TAG", "t1/../x", 1);
    char want[64];
    snprintf(want, sizeof want, "commlab-u%u-t1_.._x-", (unsigned)getuid());
    assert_string_equal(cl_shm_prefix(), want);
    cl_shm s;
    assert_int_equal(cl_shm_create(&s, "tag", 4096), CL_OK);
    assert_non_null(strstr(s.name, want));
    assert_int_equal(cl_shm_detach(&s), CL_OK);
    unsetenv("COMMLAB_SHM_TAG");
}

/* A child creates a segment, reports its name, then ends by `how`; the name must be gone. */
static void child_dies(int how)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        signal(how ? how : SIGTERM, SIG_DFL); /* cmocka catches SIGSEGV in tests */
        cl_shm s;
        if (cl_shm_create(&s, "die", 1 << 16) != CL_OK)
            _exit(3);
        if (write(fd[1], s.name, sizeof s.name) != (ssize_t)sizeof s.name)
            _exit(4);
        close(fd[1]);
        if (how == 0)
            exit(0); /* forgot to detach */
        if (how == SIGSEGV)
            *(volatile int *)0 = 1;
        raise(how);
        pause();
        _exit(5);
    }
    close(fd[1]);
    char name[CL_SHM_NAME_MAX] = {0};
    assert_int_equal(read(fd[0], name, sizeof name), (ssize_t)sizeof name);
    close(fd[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (how == 0)
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    else
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == how);
    assert_true(name[0] == '/');
    assert_false(exists(name));
}

static void test_exit_unlinks(void **state)
{
    (void)state;
    child_dies(0);
}

static void test_signals_unlink(void **state)
{
    (void)state;
    child_dies(SIGTERM);
    child_dies(SIGINT);
    child_dies(SIGABRT);
#ifndef __SANITIZE_ADDRESS__ /* AddressSanitizer owns SIGSEGV: it reports and exits */
    child_dies(SIGSEGV);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_attach_share), cmocka_unit_test(test_names_unique),
        cmocka_unit_test(test_bad_arguments),       cmocka_unit_test(test_tag_in_prefix),
        cmocka_unit_test(test_exit_unlinks),        cmocka_unit_test(test_signals_unlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
