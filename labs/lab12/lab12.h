/* lab12.h: types and functions of lab 12 (PCIe paths, GPUDirect, staged copies).
 * The driver (driver.c) calls the functions you write in lab12.c. */
#ifndef COMMLAB_LAB12_H
#define COMMLAB_LAB12_H

#include <stddef.h>

#include "commlab.h"

#define LAB12_MAX_DEPTH 16

/* NCCL's path types, with the values of NVIDIA/nccl src/include/graph.h (2.28+):
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

/* Where one PCI device sits, as the driver read it from an hwloc topology. */
typedef struct lab12_pcipos {
    char busid[16];                 /* "0000:59:00.0" */
    int numa;                       /* NUMA node of its CPU side; -1 when none is unique */
    int hostbridge;                 /* id of its host bridge; -1 when it has none */
    int nbridges;                   /* PCI-to-PCI bridges from the host bridge down to it */
    int bridge[LAB12_MAX_DEPTH];    /* their ids, the top one first */
} lab12_pcipos;

/* A link of the staged copy, emulated by the harness: a copy of n bytes over
 * it takes at least latency_s + n / bandwidth_Bps. */
typedef struct lab12_link {
    double bandwidth_Bps;
    double latency_s;
} lab12_link;

/* The harness's rate-limited copy over link (provided by the driver; thread safe). */
cl_result lab12_link_copy(const lab12_link *link, void *dst, const void *src, size_t n);

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

/* Page-locked host memory of `bytes` (CL_ERR_UNSUPPORTED with the reason when
 * the system refuses to lock it), and its release. */
cl_result lab12_pin_alloc(size_t bytes, void **buf);
void lab12_pin_free(void *buf, size_t bytes);

/* Copy bytes from src to dst through the two staging buffers (each `chunk`
 * bytes, pinned): one thread brings chunk k+1 over link `in` while another
 * drains chunk k over link `out`. */
cl_result lab12_staged_copy(void *dst, const void *src, size_t bytes, size_t chunk,
                            void *const staging[2], const lab12_link *in, const lab12_link *out);

/* The same pipeline to a GPU: pageable src -> pinned staging (CPU copy) ->
 * device dst (cudaMemcpyAsync on two streams). CL_ERR_UNSUPPORTED without CUDA. */
cl_result lab12_staged_h2d(void *dev_dst, const void *src, size_t bytes, size_t chunk);

/* Time of the double-buffered pipeline moving `bytes` in chunks of `chunk`
 * over links in and out (the model of the handout). */
double lab12_pipeline_time(size_t bytes, size_t chunk, lab12_link in, lab12_link out);

/* The chunk size, a power of two from 4 KiB up to the first one >= bytes,
 * with the smallest lab12_pipeline_time (the smaller chunk on a tie). */
size_t lab12_best_chunk(size_t bytes, lab12_link in, lab12_link out);

#endif /* COMMLAB_LAB12_H */
