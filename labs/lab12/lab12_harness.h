/* lab12_harness.h: lab 12's argument blocks (both sides), and its harness-side parts,
 * shared by driver.c and harness_*.c.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_pcie.c    the modes on a recorded server: paths, levels, decide, assign
 * harness_copy.c    the staged copy's modes: model, pipe, pipeperf, and the lab's link
 *                   operations
 * harness_server.c  a server's GPUs and RDMA NICs read from an hwloc topology, NCCL's
 *                   path classes, and the bandwidth every GPU gets through its NIC
 * harness_links.c   the two links of the staged copy: emulated in real time ("cpu"),
 *                   in virtual time ("sim"), or real ("gpu": a CPU copy into pinned
 *                   memory, then cudaMemcpyAsync), with the record of every byte
 */
#ifndef COMMLAB_LAB12_HARNESS_H
#define COMMLAB_LAB12_HARNESS_H

#include <stdint.h>

#include "harness/harness.h"
#include "lab12.h"
#include "link.h"

#ifndef MAXD
#define MAXD LAB12_MAX_DEVICES
#endif

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct paths_args {
    int32_t ngpus, nnics;
    lab12_pcipos gpu[MAXD], nic[MAXD];
    int8_t gpu_nic[MAXD * MAXD], gpu_gpu[MAXD * MAXD]; /* out */
} paths_args;

typedef struct setting {
    char gdr[64], p2p[64], dis[64]; /* "" with has_* 0: unset */
    int32_t has_gdr, has_p2p, has_dis, amd, ngpus;
} setting;

typedef struct levels_args {
    setting s;
    int32_t path;
    int32_t gdr_level, p2p_level, gdr, p2p; /* out */
} levels_args;

typedef struct decide_args {
    setting s;
    int32_t ngpus, nnics;
    int8_t gpu_nic[MAXD * MAXD], gpu_gpu[MAXD * MAXD]; /* in: path classes */
    int8_t gdr[MAXD * MAXD], p2p[MAXD * MAXD];         /* out */
} decide_args;

typedef struct assign_args {
    int32_t ngpus, nnics;
    lab12_pcipos gpu[MAXD], nic[MAXD];
    int32_t nic_of_gpu[MAXD]; /* out */
} assign_args;

typedef struct model_args {
    uint64_t bytes, chunk;
    int32_t nbuf;
    lab12_link in, out;
    double time_s; /* out */
} model_args;

typedef struct copy_args {
    lab12_job job;
    uint64_t chunk; /* out: the plan */
    int32_t nbuf;   /* out */
} copy_args;

#ifndef CL_STUDENT_SIDE
#include <hwloc.h>

/* --- servers (harness_server.c) --- */

typedef struct server {
    hwloc_topology_t topo;
    int ngpus, nnics, amd;
    hwloc_obj_t gobj[MAXD], nobj[MAXD]; /* sorted by bus id */
    lab12_pcipos gpu[MAXD], nic[MAXD];
} server;

/* Load an hwloc XML file: its GPUs (NVIDIA, class 0x0300/0x0302) and RDMA NICs (PCI
 * functions with an OpenFabrics OS device). CL_ERR_PARSE when hwloc cannot load it. */
cl_result server_load(const char *path, server *s);
void server_free(server *s);

/* NCCL's path class between two devices (the harness's own, for the models). */
int ref_classify(const lab12_pcipos *a, const lab12_pcipos *b);

/* NCCL's NIC of every GPU: the closest NICs, then the one fewest GPUs use so far. */
void ref_assign(const server *s, int *nic_of);

/* GB/s all GPUs get at once, GPU g sending through NIC nic_of[g] (max-min fair over the
 * PCIe tree, the SMP link of smp_gbps GB/s and NICs of nic_gbps Gb/s). */
cl_result aggregate(const server *s, const int *nic_of, double nic_gbps, double smp_gbps,
                    double *total);

/* --- the links (harness_links.c) --- */

/* What one staged copy did. */
typedef struct outcome {
    double seconds;
    size_t chunk, wrong;
    int nbuf;
    cl_result status;
    char error[320];
    size_t bytes_in, bytes_out; /* through each link */
    int hazards;
    double overlap_s; /* both links busy at once (cpu, sim) */
} outcome;

/* Open the links for one copy of job (every copy before it is forgotten). */
void links_open(const cl_comm *c, const lab12_job *job);

/* One operation of link.c (LAB12_OP_*), while the links are open. */
cl_result links_op(cl_comm *c, int code, lab12_op *op);

/* Close the links after a copy: copies left in flight, wrong bytes, hazards into o. */
cl_result links_close(outcome *o);

/* The harness's own copy through the links: one staging buffer, filled and drained in turn. */
cl_result links_baseline(cl_comm *c, const lab12_job *job, outcome *o);

/* Whether the links of c's backend are real GPU copies. */
int links_real(const cl_comm *c);

/* The handout's recurrence, the harness's own copy. */
double ref_pipeline(size_t bytes, size_t chunk, int nbuf, lab12_link in, lab12_link out);

/* "gpu": the buffers (pageable source, pinned staging, device destination), allocated
 * once outside any timed copy; fresh source bytes; the links' figures measured here. */
cl_result gpu_setup(const lab12_job *job);
void gpu_teardown(void);
cl_result gpu_fresh(uint64_t seed, size_t bytes);
cl_result gpu_figures(cl_comm *c, lab12_job *job);

/* --- the modes on a recorded server (harness_pcie.c) --- */

cl_result paths_case(cl_case *c);
cl_result levels_case(cl_case *c);
cl_result decide_case(cl_case *c);
cl_result assign_case(cl_case *c);

/* --- the staged copy (harness_copy.c) --- */

/* The lab's operation: one operation of link.c on the open links. */
cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes);

cl_result model_case(cl_case *c);
cl_result pipe_mode(cl_run *run, cl_comm *c);
cl_result pipeperf_mode(cl_run *run, cl_comm *c);
#endif

#endif /* COMMLAB_LAB12_HARNESS_H */
