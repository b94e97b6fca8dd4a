/* lab17.h: types and functions of lab 17 (multi-rail network design).
 * The driver (driver.c) calls the functions you write in lab17.c; rail.c gives you the
 * operations of the rails. */
#ifndef COMMLAB_LAB17_H
#define COMMLAB_LAB17_H

#include <stddef.h>
#include <stdint.h>

#include "commlab.h"

#define LAB17_MAX_GPUS  16
#define LAB17_MAX_NICS  32
#define LAB17_MAX_RAILS 8
#define LAB17_UNSET     (-1) /* an environment variable that is not set */

/* NCCL's path types (NVIDIA/nccl v2.28.9-1 src/include/graph.h), nearest first. */
enum lab17_path {
    LAB17_LOC = 0,
    LAB17_NVL = 1,
    LAB17_NVB = 2,
    LAB17_C2C = 3,
    LAB17_PIX = 4,
    LAB17_PXB = 5,
    LAB17_P2C = 6,
    LAB17_PXN = 7,
    LAB17_PHB = 8,
    LAB17_SYS = 9,
    LAB17_NET = 10,
    LAB17_DIS = 11
};

/* One server as NCCL's topology code sees it. GPUs and NICs are in NCCL's order (GPUs by
 * PCI bus id, NICs in the network plugin's order: mlx5_0, mlx5_1, ...). */
typedef struct lab17_server {
    int32_t ngpus, nnics;
    int32_t dev[LAB17_MAX_GPUS];                      /* each GPU's CUDA device index */
    int8_t gpu_gpu[LAB17_MAX_GPUS][LAB17_MAX_GPUS];   /* path type GPU -> GPU */
    int8_t gpu_nic[LAB17_MAX_GPUS][LAB17_MAX_NICS];   /* path type GPU -> NIC, before PXN */
    float gpu_nic_bw[LAB17_MAX_GPUS][LAB17_MAX_NICS]; /* GB/s of that path */
    int8_t gdr[LAB17_MAX_GPUS][LAB17_MAX_NICS];       /* 1: GPUDirect RDMA enabled (lab12) */
} lab17_server;

/* The NCCL environment variables of this lab: LAB17_UNSET, or the value NCCL would read. */
typedef struct lab17_env {
    int32_t pxn_disable;   /* NCCL_PXN_DISABLE (default 0) */
    int32_t p2p_pxn_level; /* NCCL_P2P_PXN_LEVEL (default 2) */
    int32_t cross_nic;     /* NCCL_CROSS_NIC (default 2) */
    int32_t pxn_c2c;       /* NCCL_PXN_C2C (default 1) */
    int32_t netdevs_max;   /* NCCL_NETDEVS_POLICY: LAB17_UNSET or 0 for AUTO, -2 for ALL,
                              n > 0 for MAX:n */
    int64_t p2p_net_chunksize, p2p_nvl_chunksize, p2p_pci_chunksize; /* bytes */
    int64_t buffsize;                                                /* NCCL_BUFFSIZE */
} lab17_env;

#define LAB17_POLICY_ALL (-2)

/* The rails between this rank and its peer: k of them, and the rate each port reports
 * (ibstat's "Rate", here in bytes per second). */
typedef struct lab17_rails {
    int32_t k;
    double rate[LAB17_MAX_RAILS];
} lab17_rails;

/* --- written by the student in lab17.c, in the order of the handout --- */

/* TODO 1: NCCL's local NICs of GPU g (ncclTopoGetLocal): the NICs with the highest path
 * bandwidth from it and, among those, the nearest path type, in NIC order. Returns how
 * many, written to nics. */
int lab17_local_nics(const lab17_server *s, int g, int *nics);

/* ...and the local GPUs of NIC n, the same way from the NIC's side. */
int lab17_local_gpus(const lab17_server *s, int n, int *gpus);

/* TODO 2: the NIC GPU g uses on channel c (ncclTopoGetLocalNet), and the GPU that NIC n
 * belongs to (ncclTopoGetLocalGpu: the first local GPU of n, over channels 0..63, that
 * uses n on that channel; -1 when none). */
int lab17_gpu_nic(const lab17_server *s, const lab17_env *e, int g, int c);
int lab17_nic_gpu(const lab17_server *s, const lab17_env *e, int n);

/* TODO 3: a point-to-point send of GPU g to a GPU of another node whose CUDA device index is
 * peer_dev, on channel c (ncclTopoGetNetDev without a graph): the NIC it leaves by and the
 * GPU of this node that drives it (g itself, or the PXN relay). */
void lab17_p2p_route(const lab17_server *s, const lab17_env *e, int g, int peer_dev, int c,
                     int *nic, int *proxy);

/* TODO 4: NCCL's point-to-point chunk size (comm->p2pChunkSize) of a communicator over
 * nnodes nodes; all_nvlink: every GPU pair of the node is NVLink. */
int64_t lab17_p2p_chunk(const lab17_env *e, int nnodes, int all_nvlink);

/* TODO 5: move one message of `bytes` bytes from rank 0 (sender != 0) to rank 1 over the
 * rails of r, with the operations of rail.c. Both ranks run it with the same arguments. */
cl_result lab17_stripe(cl_comm *comm, const lab17_rails *r, size_t bytes, int sender);

/* --- given (rail.c): the rails, run by the harness --- */

typedef struct lab17_xfer {
    int32_t id; /* 0: none */
} lab17_xfer;

/* Post bytes [offset, offset + n) of the message on rail `rail`: the sender's go out, the
 * receiver's land at the same offset. Returns at once; x names the transfer. On each rail,
 * the receiver's posts must match the sender's, in order (offset and n). At most 64
 * transfers per rail in flight. */
cl_result lab17_rail_post(cl_comm *comm, int rail, size_t offset, size_t n, lab17_xfer *x);

/* Wait until the transfer has left (sender) or arrived (receiver). Every transfer must be
 * waited for before lab17_stripe returns. */
cl_result lab17_rail_wait(cl_comm *comm, lab17_xfer *x);

#endif /* COMMLAB_LAB17_H */
