/* lab12.c: lab 12, PCIe paths, GPUDirect decisions and a staged copy pipeline.
 *
 * You classify the PCIe path between every GPU and NIC of recorded servers as
 * NCCL does, decide where GPUDirect RDMA and P2P are used under NCCL's level
 * settings, give every GPU its NIC, and move data through pinned staging
 * buffers so that both links of a staged copy stay busy. Read
 * labs/lab12/README.md first; the TODOs below are in the order of its
 * sections. Build with `make lab12`, grade with `./grade lab12`.
 */
#include <string.h>
#include <stdlib.h>

#include "lab12.h"

lab12_path lab12_classify(const lab12_pcipos *a, const lab12_pcipos *b)
{
    // TODO(lab12) 1: the PCIe path class of two devices (LOC, PIX, PXB, PHB or SYS),
    //   by the rules of the handout's section 1.
    (void)a, (void)b;
    return LAB12_UNSET;
}

int lab12_parse_level(const char *value)
{
    // TODO(lab12) 2: a level as NCCL's ncclGetLevel() reads it: a path name, or a legacy
    //   number; LAB12_UNSET for NULL and anything else.
    (void)value;
    return LAB12_UNSET;
}

int lab12_gdr_enabled(lab12_path path, const char *gdr_level)
{
    // TODO(lab12) 3: GPUDirect RDMA: used when the GPU-NIC distance is no farther than
    //   the level (PXB when unset); with NCCL_NET_GDR_C2C=1, NCCL's default, a P2C path
    //   counts as C2C.
    (void)path, (void)gdr_level;
    return -1;
}

int lab12_p2p_enabled(lab12_path path, const char *p2p_disable, const char *p2p_level, int amd_x86,
                      int ngpus)
{
    // TODO(lab12) 4: P2P between two GPUs: used when the path is no farther than the level;
    //   the default level, NCCL_P2P_DISABLE and NCCL_P2P_LEVEL as in the handout.
    (void)path, (void)p2p_disable, (void)p2p_level, (void)amd_x86, (void)ngpus;
    return -1;
}

cl_result lab12_assign_nics(const lab12_pcipos *gpu, int ngpus, const lab12_pcipos *nic, int nnics,
                            int *nic_of_gpu)
{
    // TODO(lab12) 5: give every GPU its NIC.
    //   All GPUs send at once: a NIC far from its GPU costs GPUDirect RDMA and maybe the SMP
    //   link; a NIC two GPUs share gives each half its line rate.
    (void)gpu, (void)ngpus, (void)nic, (void)nnics, (void)nic_of_gpu;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab12_pipeline_time(size_t bytes, size_t chunk, int nbuf, lab12_link in, lab12_link out)
{
    // TODO(lab12) 6: the pipeline model of the handout (its recurrence).
    //   The time the last chunk reaches the destination; 0 for 0 bytes, -1 for a bad chunk or nbuf.
    (void)bytes, (void)chunk, (void)nbuf, (void)in, (void)out;
    return -1.0;
}

cl_result lab12_plan(const lab12_job *job, size_t *chunk, int *nbuf)
{
    // TODO(lab12) 7: choose the chunk and the number of buffers with the smallest modelled time.
    //   Chunks: powers of two from 4 KiB; 1..LAB12_MAX_BUFS buffers; nbuf * chunk <= staging.
    (void)job, (void)chunk, (void)nbuf;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab12_staged_copy(cl_comm *comm, const lab12_job *job, size_t chunk, int nbuf)
{
    // TODO(lab12) 8: the staged copy, chunk by chunk, with the given link operations.
    //   Every byte goes through link in and then link out exactly once. A buffer may be
    //   refilled only after its last chunk has left it, and drained only after it is full.
    (void)comm, (void)job, (void)chunk, (void)nbuf;
    return CL_ERR_NOT_IMPLEMENTED;
}
