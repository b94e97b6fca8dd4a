/* driver.c: lab 19's plug-in: Slurm hostlists and topology.conf for a tree fabric, and a job
 * placement policy replayed over a job trace.
 *
 *   lab19 hostlist names=dgx001,dgx002,dgx005        your hostlist of those names
 *   lab19 topology fabric=FILE                       your topology.conf for a fabric
 *   lab19 replay fabric=FILE trace=FILE [policy=student|firstfit] [jobs=FILE]
 *                                                    the trace replayed with your placements
 *                                                    (jobs=: every job's nodes, as sacct -P)
 *   (or --cases FILE with one case per line)
 *
 * The harness reads the files (the student's program opens none); the replay,
 * its checks and its metrics are in harness_replay.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "lab19_args.h"

#ifdef CL_STUDENT_SIDE

static cl_result hostlist(cl_comm *c, void *args)
{
    (void)c;
    hostlist_args *a = args;
    return lab19_hostlist(a->names, a->n, a->out, sizeof a->out);
}

static cl_result topology(cl_comm *c, void *args)
{
    (void)c;
    topology_args *a = args;
    return lab19_topology_conf(a->f, a->out, sizeof a->out);
}

static cl_result place(cl_comm *c, void *args)
{
    (void)c;
    place_args *a = args;
    return lab19_place(a->f, &a->s, &a->job, a->nodes);
}

CL_STUDENT_ENTRIES({"hostlist", hostlist}, {"topology", topology}, {"place", place});

#else

#include "boundary/arena.h"
#include "lab19_harness.h"

/* The text a student function wrote into a fixed buffer, cut at its end. */
static const char *text_of(char *buf, size_t n)
{
    buf[n - 1] = '\0';
    return buf;
}

/* names=a,b,c: the names in the arena, as an array the student's program reads. */
static cl_result hostlist_case(cl_case *c)
{
    const char *list;
    CL_CHECK(cl_case_str(c, "names", &list));
    static hostlist_args a;
    memset(&a, 0, sizeof a);
    size_t len = strlen(list);
    /* One piece of the arena: the pointers, then the names they point to. */
    size_t head = LAB19_MAX_NODES * sizeof(char *);
    char *blk;
    CL_CHECK(cl_host_alloc(head + len + 1, (void **)&blk));
    const char **ptrs = (const char **)blk;
    char *copy = blk + head;
    memcpy(copy, list, len + 1);
    int n = 0;
    cl_result rc = CL_OK;
    for (char *save, *tok = strtok_r(copy, ",", &save); tok && rc == CL_OK;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == LAB19_MAX_NODES) {
            cl_set_error("names: more than %d", LAB19_MAX_NODES);
            rc = CL_ERR_INVALID;
        } else if (strlen(tok) >= LAB19_NAME) {
            cl_set_error("names: '%s' is longer than %d characters", tok, LAB19_NAME - 1);
            rc = CL_ERR_INVALID;
        } else {
            ptrs[n++] = tok;
        }
    }
    a.n = n;
    a.names = ptrs;
    if (rc == CL_OK)
        rc = cl_case_call(c, "hostlist", &a, sizeof a);
    cl_col_int(cl_case_row(c), "n", n);
    cl_col_str(cl_case_row(c), "hostlist", text_of(a.out, sizeof a.out));
    cl_host_free(blk);
    return rc;
}

static cl_result topology_case(cl_case *c)
{
    const char *path;
    CL_CHECK(cl_case_str(c, "fabric", &path));
    lab19_fabric *f = malloc(sizeof *f);
    if (!f)
        return CL_ERR_NOMEM;
    cl_result rc = lab19_read_fabric(path, f);
    static topology_args a;
    memset(&a, 0, sizeof a);
    if (rc == CL_OK && !(a.f = cl_share(f, sizeof *f)))
        rc = CL_ERR_NOMEM;
    if (rc == CL_OK)
        rc = cl_case_call(c, "topology", &a, sizeof a);
    cl_col_str(cl_case_row(c), "topology", text_of(a.out, sizeof a.out));
    if (a.f)
        cl_host_free((void *)a.f);
    free(f);
    return rc;
}

static const cl_option options[] = {
    {"samples", "replay: points of the fragmentation timeline", "100"}, {0}};

const cl_lab cl_lab_def = {
    .name = "lab19",
    .title = "拓扑感知调度: Slurm topology.conf and job placement on a tree fabric",
    .modes = (const cl_mode[]){{.name = "hostlist",
                                .help = "your hostlist of a set of names: names=a,b,c",
                                .cases = hostlist_case},
                               {.name = "topology",
                                .help = "your topology.conf of a fabric: fabric=FILE",
                                .cases = topology_case},
                               {.name = "replay",
                                .help = "a job trace replayed with your placements: fabric=FILE "
                                        "trace=FILE [policy=student|firstfit] [jobs=FILE]",
                                .cases = lab19_replay_case},
                               {0}},
    .options = options,
};

#endif
