/* harness_provider.c: which libibverbs lab 13's student program runs on (--verbs emu: the
 * emulated provider beside this program, found and put on its LD_LIBRARY_PATH; --verbs nic:
 * rdma-core, on a machine with an RDMA device), and the emulated HCA serving the requests of
 * each rank's provider.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu/verbs_msg.h"
#include "session/session.h"

/* --- the student's program: which libibverbs -------------------------------------------- */

cl_result student_setup(cl_run *run, cl_student_opts *o)
{
    static char env[600];
    const char *v = cl_opt(run, "verbs");
    if (strcmp(v, "emu") == 0) {
        char self[480], dir[520];
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        if (k <= 0) {
            cl_set_error("cannot find this program's folder (readlink /proc/self/exe: %s)",
                         strerror(errno));
            return CL_ERR_IO;
        }
        self[k] = '\0';
        *strrchr(self, '/') = '\0';
        snprintf(dir, sizeof dir, "%s/verbs-emu", self);
        char lib[560];
        snprintf(lib, sizeof lib, "%s/libibverbs.so.1", dir);
        if (access(lib, R_OK) != 0) {
            cl_set_error("the emulated verbs provider %s is missing (make lab13 builds it)", lib);
            return CL_ERR_IO;
        }
        snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s", dir);
        o->env[0] = env;
        return CL_OK;
    }
    if (strcmp(v, "nic") == 0) {
        DIR *d = opendir("/sys/class/infiniband");
        struct dirent *e;
        int n = 0;
        while (d && (e = readdir(d)))
            n += e->d_name[0] != '.';
        if (d)
            closedir(d);
        if (n == 0) {
            cl_set_error("no RDMA device here (/sys/class/infiniband is %s): --verbs nic needs "
                         "one; --verbs emu runs anywhere",
                         d ? "empty" : "missing");
            return CL_ERR_UNSUPPORTED;
        }
        o->permits |= CL_PERMIT_DEVICES;
        return CL_OK;
    }
    cl_set_error("--verbs wants emu or nic, not '%s'", v);
    return CL_ERR_INVALID;
}

/* The emulated HCA serves the requests of this rank's provider. */
cl_result lab_op(cl_run *run, cl_comm *comm, int code, void *args, size_t bytes)
{
    (void)run;
    if (code != EMU_CALL_CODE || !L13.fabric) {
        cl_set_error("no emulated HCA in this run (operation %d)", code);
        return CL_ERR_INVALID;
    }
    hca_call(L13.fabric, cl_comm_rank(comm), args, bytes);
    return CL_OK;
}
