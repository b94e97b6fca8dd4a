/* driver.c: lab 12's plug-in: PCIe paths of recorded servers, NCCL's GDR/P2P decisions, the
 * NIC of every GPU, and staged copies over links the harness emulates or drives.
 *
 *   lab12 paths  file=datasets/hwloc/X.xml          path classes, GPU-NIC and GPU-GPU
 *   lab12 levels path=N gdr=V p2p=V dis=V [amd=1 ngpus=2]   one decision (V: "-" unset,
 *                                                   x:HEX for values with blanks)
 *   lab12 decide file=X.xml gdr=V p2p=V dis=V       every pair of a server
 *   lab12 assign file=X.xml seed=N nic_gbps=G smp_gbps=S   your NIC per GPU, and its
 *                                                   bandwidth with all GPUs sending at once
 *   lab12 model  bytes=B chunk=C nbuf=N bw_in=.. lat_in=.. bw_out=.. lat_out=..
 *   lab12 pipe     [--backend cpu|sim|gpu]          staged copies of awkward sizes, checked
 *   lab12 pipeperf [--bytes 64M --staging 8M --in 2:20 --out 1.6:20 --rounds 5]
 *                                                   yours vs one staging buffer, paired
 *
 * The links: on "cpu" the harness emulates them in real time (a copy over a link ends at
 * start + latency + n / bandwidth, and a wait sleeps until then), on "sim" in virtual
 * time, and on "gpu" they are real: a CPU copy from pageable memory into pinned memory,
 * then cudaMemcpyAsync to the GPU. Data never passes through the student's program: on
 * "cpu" and "sim" the harness tracks where every staged and delivered byte came from, on
 * "gpu" it reads the GPU's copy back.
 *
 * This file holds the student's entries and the lab's table; the modes on a recorded
 * server are in harness_pcie.c, the staged copy's in harness_copy.c; harness_server.c
 * reads the servers and harness_links.c runs the links (lab12_harness.h).
 */
#include "harness/harness.h"
#include "lab12_harness.h"

#ifdef CL_STUDENT_SIDE

static const char *value(const char *v, int has) { return has ? v : NULL; }

static cl_result paths(cl_comm *c, void *args)
{
    (void)c;
    paths_args *a = args;
    for (int g = 0; g < a->ngpus; g++) {
        for (int n = 0; n < a->nnics; n++)
            a->gpu_nic[g * MAXD + n] = (int8_t)lab12_classify(&a->gpu[g], &a->nic[n]);
        for (int h = 0; h < a->ngpus; h++)
            a->gpu_gpu[g * MAXD + h] = (int8_t)lab12_classify(&a->gpu[g], &a->gpu[h]);
    }
    return CL_OK;
}

static cl_result levels(cl_comm *c, void *args)
{
    (void)c;
    levels_args *a = args;
    const setting *s = &a->s;
    a->gdr_level = lab12_parse_level(value(s->gdr, s->has_gdr));
    a->p2p_level = lab12_parse_level(value(s->p2p, s->has_p2p));
    a->gdr = lab12_gdr_enabled((lab12_path)a->path, value(s->gdr, s->has_gdr));
    a->p2p = lab12_p2p_enabled((lab12_path)a->path, value(s->dis, s->has_dis),
                               value(s->p2p, s->has_p2p), s->amd, s->ngpus);
    return CL_OK;
}

static cl_result decide(cl_comm *c, void *args)
{
    (void)c;
    decide_args *a = args;
    const setting *s = &a->s;
    for (int g = 0; g < a->ngpus; g++) {
        for (int n = 0; n < a->nnics; n++)
            a->gdr[g * MAXD + n] = (int8_t)lab12_gdr_enabled((lab12_path)a->gpu_nic[g * MAXD + n],
                                                             value(s->gdr, s->has_gdr));
        for (int h = 0; h < a->ngpus; h++)
            a->p2p[g * MAXD + h] = (int8_t)lab12_p2p_enabled(
                (lab12_path)a->gpu_gpu[g * MAXD + h], value(s->dis, s->has_dis),
                value(s->p2p, s->has_p2p), s->amd, s->ngpus);
    }
    return CL_OK;
}

static cl_result assign(cl_comm *c, void *args)
{
    (void)c;
    assign_args *a = args;
    int out[MAXD];
    CL_CHECK(lab12_assign_nics(a->gpu, a->ngpus, a->nic, a->nnics, out));
    for (int g = 0; g < a->ngpus; g++)
        a->nic_of_gpu[g] = out[g];
    return CL_OK;
}

static cl_result model(cl_comm *c, void *args)
{
    (void)c;
    model_args *a = args;
    a->time_s = lab12_pipeline_time(a->bytes, a->chunk, a->nbuf, a->in, a->out);
    return CL_OK;
}

static cl_result copy(cl_comm *c, void *args)
{
    copy_args *a = args;
    size_t chunk = 0;
    int nbuf = 0;
    CL_CHECK(lab12_plan(&a->job, &chunk, &nbuf));
    a->chunk = chunk, a->nbuf = nbuf;
    return lab12_staged_copy(c, &a->job, chunk, nbuf);
}

CL_STUDENT_ENTRIES({"paths", paths}, {"levels", levels}, {"decide", decide}, {"assign", assign},
                   {"model", model}, {"copy", copy});

#else

const cl_lab cl_lab_def = {
    .name = "lab12",
    .title = "PCIe 与 GPUDirect: paths, NCCL's decisions, NICs and staged copies",
    .modes =
        (const cl_mode[]){
            {.name = "paths",
             .help = "your path classes of a server (file=X.xml)",
             .cases = paths_case},
            {.name = "levels",
             .help = "your GDR/P2P decision for path=N gdr=V p2p=V dis=V",
             .cases = levels_case},
            {.name = "decide",
             .help = "your decisions for every pair of file=X.xml",
             .cases = decide_case},
            {.name = "assign",
             .help = "your NIC per GPU of file=X.xml, and its bandwidth",
             .cases = assign_case},
            {.name = "model", .help = "your modelled time of a staged copy", .cases = model_case},
            {.name = "pipe",
             .help = "your staged copies of awkward sizes, every byte checked",
             .ranks = pipe_mode},
            {.name = "pipeperf",
             .help = "your staged copy vs one staging buffer, paired rounds",
             .ranks = pipeperf_mode},
            {0}},
    .options =
        (const cl_option[]){
            {.name = "staging", .help = "pinned staging memory", .fallback = "8M"},
            {.name = "in", .help = "link in, GB/s:latency us (cpu, sim)", .fallback = "2:20"},
            {.name = "out", .help = "link out, GB/s:latency us (cpu, sim)", .fallback = "1.6:20"},
            {.name = "rounds", .help = "pipeperf: paired samples", .fallback = "5"},
            {0}},
    .lab_op = lab_op,
};

#endif
