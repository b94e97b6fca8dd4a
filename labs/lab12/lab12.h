/* lab12.h: types and functions of lab 12 (PCIe paths, GPUDirect, staged copies).
 * The driver (driver.c) calls the functions you write in lab12.c. */
#ifndef COMMLAB_LAB12_H
#define COMMLAB_LAB12_H

#include <stddef.h>

#include "commlab.h"

#define LAB12_MAX_DEPTH   16
#define LAB12_MAX_DEVICES 64
#define LAB12_MAX_BUFS    8

/* NCCL's path types, with the values of NVIDIA/nccl src/graph/topo.h (v2.28.9-1):
 * a lower value is a closer path. LAB12_UNSET: no valid user setting. */
typedef enum lab12_path {
    LAB12_UNSET = -2,
    LAB12_LOC = 0, /* the same device */
    LAB12_NVL = 1, /* NVLink */
    LAB12_NVB = 2, /* NVLink through an intermediate GPU */
    LAB12_C2C = 3, /* NVLink-C2C (Grace) */
    LAB12_PIX = 4, /* at most a single PCIe bridge (switch) */
    LAB12_PXB = 5, /* several PCIe bridges, no host bridge */
    LAB12_P2C = 6, /* GPU to CPU over C2C, then PCIe to the NIC */
    LAB12_PXN = 7, /* to a NIC through an intermediate GPU */
    LAB12_PHB = 8, /* through a PCIe host bridge (the CPU) */
    LAB12_SYS = 9  /* through the SMP interconnect between NUMA nodes */
} lab12_path;

/* Where one PCI device sits, as the harness read it from an hwloc topology. */
typedef struct lab12_pcipos {
    char busid[16];              /* "0000:59:00.0" */
    int numa;                    /* NUMA node of its CPU side; -1 when none is unique */
    int hostbridge;              /* id of its host bridge; -1 when it has none */
    int nbridges;                /* PCI-to-PCI bridges from the host bridge down to it */
    int bridge[LAB12_MAX_DEPTH]; /* their ids, the top one first */
} lab12_pcipos;

/* One link of a staged copy: a copy of n bytes over it takes latency_s + n / bandwidth_Bps,
 * and a link makes one copy at a time, in the order they were posted. */
typedef struct lab12_link {
    double bandwidth_Bps;
    double latency_s;
} lab12_link;

/* A staged copy: `bytes` from the source (pageable host memory) to the destination (a
 * GPU's memory on "gpu"), through the pinned staging memory the harness holds
 * (staging_bytes). Link `in` fills a staging buffer from the source (the CPU copies);
 * link `out` drains one into the destination (the DMA engine). */
typedef struct lab12_job {
    size_t bytes;
    size_t staging_bytes;
    lab12_link in, out; /* the links' figures (measured beforehand on "gpu") */
} lab12_job;

/* A copy in flight. */
typedef struct lab12_copy {
    int id;
} lab12_copy;

/* --- given (link.c): the harness's links ---------------------------------------------- */

/* Divide the staging memory into nbuf buffers of chunk bytes (1 <= nbuf <= LAB12_MAX_BUFS,
 * nbuf * chunk <= staging_bytes), with no copy in flight. */
cl_result lab12_stage(cl_comm *comm, int nbuf, size_t chunk);

/* Post a copy and return at once: source bytes [offset, offset + n) into staging buffer
 * buf (over link in), or the first n bytes of buffer buf to destination bytes
 * [offset, offset + n) (over link out). n <= chunk. */
cl_result lab12_copy_in(cl_comm *comm, int buf, size_t offset, size_t n, lab12_copy *copy);
cl_result lab12_copy_out(cl_comm *comm, int buf, size_t offset, size_t n, lab12_copy *copy);

/* Block until the copy is complete. Every posted copy must be waited for. */
cl_result lab12_wait(cl_comm *comm, lab12_copy *copy);

/* --- written by the student in lab12.c, in the order of the handout --- */

/* The PCIe path class between two devices: LOC, PIX, PXB, PHB or SYS. */
lab12_path lab12_classify(const lab12_pcipos *a, const lab12_pcipos *b);

/* A level as NCCL reads NCCL_P2P_LEVEL / NCCL_NET_GDR_LEVEL: a path name or a
 * legacy number; NULL or anything else: LAB12_UNSET. */
int lab12_parse_level(const char *value);

/* Would NCCL use GPUDirect RDMA between a GPU and a NIC at this distance,
 * with NCCL_NET_GDR_LEVEL = gdr_level (NULL: unset)? 1 yes, 0 no. */
int lab12_gdr_enabled(lab12_path path, const char *gdr_level);

/* Would NCCL use P2P between two GPUs at this distance, given NCCL_P2P_DISABLE,
 * NCCL_P2P_LEVEL (NULL: unset), an x86 AMD CPU (amd_x86) and ngpus GPUs? */
int lab12_p2p_enabled(lab12_path path, const char *p2p_disable, const char *p2p_level, int amd_x86,
                      int ngpus);

/* Choose the NIC each GPU sends through (nic_of_gpu[g] in 0..nnics-1), all GPUs sending
 * at once. The devices come in no particular order. */
cl_result lab12_assign_nics(const lab12_pcipos *gpu, int ngpus, const lab12_pcipos *nic, int nnics,
                            int *nic_of_gpu);

/* The time of the staged copy of `bytes` in chunks of `chunk` through nbuf staging buffers
 * over links in and out (the model of the handout); 0 for 0 bytes. */
double lab12_pipeline_time(size_t bytes, size_t chunk, int nbuf, lab12_link in, lab12_link out);

/* The chunk (a power of two, at least 4 KiB) and the number of buffers (1..LAB12_MAX_BUFS,
 * nbuf * chunk <= job->staging_bytes) for job. */
cl_result lab12_plan(const lab12_job *job, size_t *chunk, int *nbuf);

/* Move job->bytes from the source to the destination through nbuf buffers of chunk bytes. */
cl_result lab12_staged_copy(cl_comm *comm, const lab12_job *job, size_t chunk, int nbuf);

#endif /* COMMLAB_LAB12_H */
