/* lab12.c: lab 12, PCIe paths, GPUDirect decisions and a staged copy pipeline.
 *
 * You classify the PCIe path between every GPU and NIC of recorded servers as
 * NCCL does, decide where GPUDirect RDMA and P2P are used under NCCL's level
 * settings, and move data through two pinned staging buffers so that both
 * links stay busy. Read labs/lab12/README.md first; the TODOs below are in
 * the order of its sections. Build with `make lab12`, grade with `./grade lab12`.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "lab12.h"

lab12_path lab12_classify(const lab12_pcipos *a, const lab12_pcipos *b)
{
    // TODO(lab12) 1: the PCIe path class.
    //   The same device: LOC. Different NUMA nodes: SYS. Different host bridges,
    //   or no PCI-to-PCI bridge in common: PHB. Otherwise count the bridges each
    //   device has below the deepest common one: both <= 1 (the two sit on one
    //   switch) is PIX, more is PXB.
    (void)a, (void)b;
    return LAB12_UNSET;
}

int lab12_parse_level(const char *value)
{
    // TODO(lab12) 2: read a level as NCCL's ncclGetLevel() does.
    //   An exact (case-sensitive) path name LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS
    //   gives its value; text starting with a digit is a legacy number read with
    //   strtol(value, NULL, 0): 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS.
    //   NULL or anything else: LAB12_UNSET (NCCL then keeps its default).
    (void)value;
    return LAB12_UNSET;
}

int lab12_gdr_enabled(lab12_path path, const char *gdr_level)
{
    // TODO(lab12) 3: GPUDirect RDMA: used when the GPU-NIC path is no farther
    //   than the level; unset level: P2C (NCCL's default with NCCL_NET_GDR_C2C=1).
    (void)path, (void)gdr_level;
    return -1;
}

int lab12_p2p_enabled(lab12_path path, const char *p2p_disable, const char *p2p_level, int amd_x86,
                      int ngpus)
{
    // TODO(lab12) 4: P2P between two GPUs: used when the path is no farther than
    //   the level. Default PXB, or SYS on x86 AMD CPUs with at most 2 GPUs.
    //   NCCL_P2P_DISABLE read with strtol(..., 0) equal to 1 forces LOC; otherwise
    //   a valid NCCL_P2P_LEVEL replaces the default.
    (void)path, (void)p2p_disable, (void)p2p_level, (void)amd_x86, (void)ngpus;
    return -1;
}

cl_result lab12_pin_alloc(size_t bytes, void **buf)
{
    // TODO(lab12) 5: page-locked memory.
    //   mmap() an anonymous private region, then mlock() it so that its pages stay
    //   resident (a DMA engine can then read them at any time). mlock refused:
    //   munmap, cl_set_error(...) naming `ulimit -l`, return CL_ERR_UNSUPPORTED.
    (void)bytes, (void)buf;
    return CL_ERR_NOT_IMPLEMENTED;
}

void lab12_pin_free(void *buf, size_t bytes)
{
    (void)buf, (void)bytes;
}


cl_result lab12_staged_copy(void *dst, const void *src, size_t bytes, size_t chunk,
                            void *const staging[2], const lab12_link *in, const lab12_link *out)
{
    // TODO(lab12) 6: the double-buffered pipeline on the CPU.
    //   Start one reader thread (pthread_create): for chunk k it waits until
    //   staging[k % 2] is empty, copies the chunk into it with
    //   lab12_link_copy(in, ...) and marks it full. The calling thread is the
    //   writer: waits until staging[k % 2] is full, drains it to dst with
    //   lab12_link_copy(out, ...) and marks it empty. Two semaphores per buffer
    //   (sem_init/sem_wait/sem_post) are enough. The last chunk may be short.
    (void)dst, (void)src, (void)bytes, (void)chunk, (void)staging, (void)in, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

double lab12_pipeline_time(size_t bytes, size_t chunk, lab12_link in, lab12_link out)
{
    // TODO(lab12) 7: the pipeline model (see the handout's recurrence).
    //   R[k] = max(R[k-1], W[k-2]) + t_in(c_k);  W[k] = max(W[k-1], R[k]) + t_out(c_k)
    //   t(c) = latency + c / bandwidth; the answer is W of the last chunk (0 for 0 bytes).
    (void)bytes, (void)chunk, (void)in, (void)out;
    return -1.0;
}

size_t lab12_best_chunk(size_t bytes, lab12_link in, lab12_link out)
{
    // TODO(lab12) 8: try every power of two from 4096 up to the first one >= bytes
    //   with lab12_pipeline_time() and return the fastest (the smaller on a tie).
    (void)bytes, (void)in, (void)out;
    return 0;
}

cl_result lab12_staged_h2d(void *dev_dst, const void *src, size_t bytes, size_t chunk)
{
    // TODO(lab12) 9: the pipeline to a GPU (inside #ifdef CL_HAVE_CUDA).
    //   Two cudaHostAlloc'd staging buffers, two streams, one event per buffer.
    //   For chunk k, buffer b = k % 2: wait for b's event (its previous copy has
    //   left it), memcpy the chunk into it, cudaMemcpyAsync it to the device on
    //   stream b, record b's event. Then synchronise both streams and free all.
    //   Without CUDA: return CL_ERR_UNSUPPORTED.
    (void)dev_dst, (void)src, (void)bytes, (void)chunk;
    return CL_ERR_NOT_IMPLEMENTED;
}
