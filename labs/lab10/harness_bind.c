/* harness_bind.c: lab 10's bind mode: the student's binding of its program to each set,
 * seen from outside (the program's affinity, and the CPUs it ran on).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/inspect.h"
#include "lab10_harness.h"

/* The CPUs process pid may run on, as the kernel says. */
static void affinity_of(pid_t pid, hwloc_bitmap_t out)
{
    cpu_set_t mask;
    CPU_ZERO(&mask);
    hwloc_bitmap_zero(out);
    if (sched_getaffinity(pid, sizeof mask, &mask) == 0)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &mask))
                hwloc_bitmap_set(out, (unsigned)i);
}

/* The CPU process pid last ran on (field 39 of /proc/PID/stat), or -1. */
static int last_cpu(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    int field = 2, cpu = -1;
    for (char *t = p ? strtok(p + 1, " ") : NULL; t; t = strtok(NULL, " "))
        if (++field == 39) {
            cpu = atoi(t);
            break;
        }
    return cpu;
}

/* One requested set: your binding, then the kernel's view of the program. */
static cl_result bind_one(cl_run *run, cl_comm *c, const char *cpus)
{
    char buf[LIST];
    bind_args a;
    cl_call_result res;
    snprintf(a.cpus, sizeof a.cpus, "%s", cpus);
    CL_CHECK(cl_student_run(c, "bind", &a, sizeof a, 0, &res));
    cl_row *row = cl_row_begin(run, c);
    cl_col_str(row, "requested", cpus);
    cl_col_call(row, &res);
    pid_t pid = cl_student_pid();
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), seen = hwloc_bitmap_alloc();
    affinity_of(pid, set);
    hwloc_bitmap_list_snprintf(buf, sizeof buf, set);
    cl_col_str(row, "affinity", buf);
    cl_result rc = CL_OK;
    for (int i = 0; i < 5 && pid && rc == CL_OK; i++) {
        spin_args s = {.seconds = 0.02};
        rc = cl_student_run(c, "spin", &s, sizeof s, 0, &res);
        int cpu = last_cpu(pid);
        if (cpu >= 0)
            hwloc_bitmap_set(seen, (unsigned)cpu);
    }
    hwloc_bitmap_list_snprintf(buf, sizeof buf, seen);
    cl_col_str(row, "ran_on", buf);
    cl_row_end(row);
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(seen);
    return rc;
}

cl_result bind_mode(cl_run *run, cl_comm *c)
{
    char sets[4096], *save = NULL, buf[LIST];
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    affinity_of(0, mine);
    hwloc_bitmap_list_snprintf(buf, sizeof buf, mine);
    hwloc_bitmap_free(mine);
    cl_report_str(run, "allowed", buf); /* where this process may run */
    snprintf(sets, sizeof sets, "%s", cl_opt(run, "sets"));
    for (char *t = strtok_r(sets, "|", &save); t; t = strtok_r(NULL, "|", &save))
        CL_CHECK(bind_one(run, c, strcmp(t, "all") == 0 ? buf : t));
    return CL_OK;
}
