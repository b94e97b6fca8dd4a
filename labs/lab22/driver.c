/* driver.c: lab 22's plug-in: ZeRO-1/2/3 on a small MLP, checked against plain data parallel.
 *
 *   lab22 collectives                   your ring ReduceScatter and AllGather, exact
 *   lab22 train [--stages 0,1,2,3]      each stage's model after --steps steps, the bytes
 *                                       each rank sent and its peak memory, from the trace
 *   lab22 bucket params=6.7e9 ranks=64 ...   your ZeRO-2 bucket, modelled, and the best one
 *
 * The harness never takes the student's word: the model after k steps is
 * compared with the harness's own plain data-parallel run in double precision
 * (harness_train.c); the bytes a rank sent and the memory it held are read from
 * the harness's trace of the call (every cl_send, cl_mem_alloc, cl_mem_free).
 *
 * This file holds the student's entries and the lab's table; the modes are in
 * harness_collectives.c, harness_stages.c and harness_bucket.c, what the trace says
 * in harness_trace.c (lab22_harness.h). */
#include "lab22_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result coll(cl_comm *c, void *args)
{
    coll_args *a = args;
    return a->gather ? lab22_all_gather(c, a->shard, a->n, a->buf)
                     : lab22_reduce_scatter(c, a->buf, a->n, a->shard);
}

static cl_result train(cl_comm *c, void *args)
{
    train_args *a = args;
    return lab22_train(c, &a->job);
}

static cl_result bucket(cl_comm *c, void *args)
{
    (void)c;
    bucket_args *a = args;
    a->bucket = lab22_choose_bucket(&a->k);
    return CL_OK;
}

CL_STUDENT_ENTRIES({"coll", coll}, {"train", train}, {"bucket", bucket});

#else

static const cl_mode modes[] = {
    {.name = "collectives",
     .help = "your ring ReduceScatter and AllGather, checked exactly, bytes from the trace",
     .ranks = collectives_mode,
     .backends = "cpu"},
    {.name = "train",
     .help = "each --stages' model after --steps steps, bytes sent and peak memory",
     .ranks = train_mode,
     .backends = "cpu"},
    {.name = "bucket",
     .help = "your ZeRO-2 bucket for a cluster, and the best",
     .cases = bucket_case},
    {0}};

static const cl_option options[] = {
    {.name = "stages", .help = "0,1,2,3  train: the stages to run", .fallback = "0,1,2,3"},
    {.name = "layers", .help = "N  train: layers", .fallback = "8"},
    {.name = "width", .help = "N  train: width of every layer", .fallback = "64"},
    {.name = "batch", .help = "N  train: rows of each rank's batch", .fallback = "8"},
    {.name = "steps", .help = "N  train: optimizer steps", .fallback = "3"},
    {0}};

const cl_lab cl_lab_def = {
    .name = "lab22",
    .title = "ZeRO 通信模式",
    .modes = modes,
    .options = options,
};

#endif
