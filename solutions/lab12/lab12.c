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
    /* BEGIN SOLUTION */
    if (strcmp(a->busid, b->busid) == 0)
        return LAB12_LOC;
    if (a->numa != b->numa)
        return LAB12_SYS;
    if (a->hostbridge != b->hostbridge || a->hostbridge < 0)
        return LAB12_PHB;
    int common = 0;
    while (common < a->nbridges && common < b->nbridges &&
           a->bridge[common] == b->bridge[common])
        common++;
    if (common == 0)
        return LAB12_PHB;
    return a->nbridges - common <= 1 && b->nbridges - common <= 1 ? LAB12_PIX : LAB12_PXB;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 1: the PCIe path class.
    //   The same device: LOC. Different NUMA nodes: SYS. Different host bridges,
    //   or no PCI-to-PCI bridge in common: PHB. Otherwise count the bridges each
    //   device has below the deepest common one: both <= 1 (the two sit on one
    //   switch) is PIX, more is PXB.
    (void)a, (void)b;
    return LAB12_UNSET;
    END SKELETON */
}

int lab12_parse_level(const char *value)
{
    /* BEGIN SOLUTION */
    static const char *const names[] = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                        "PXB", "P2C", "PXN", "PHB", "SYS"};
    static const int legacy[] = {LAB12_LOC, LAB12_PIX, LAB12_PXB, LAB12_PHB, LAB12_SYS, LAB12_SYS};
    if (!value)
        return LAB12_UNSET;
    for (int i = 0; i <= LAB12_SYS; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    if (value[0] >= '0' && value[0] <= '9') {
        long old = strtol(value, NULL, 0);
        return legacy[old > 5 ? 5 : old];
    }
    return LAB12_UNSET;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 2: read a level as NCCL's ncclGetLevel() does.
    //   An exact (case-sensitive) path name LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS
    //   gives its value; text starting with a digit is a legacy number read with
    //   strtol(value, NULL, 0): 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS.
    //   NULL or anything else: LAB12_UNSET (NCCL then keeps its default).
    (void)value;
    return LAB12_UNSET;
    END SKELETON */
}

int lab12_gdr_enabled(lab12_path path, const char *gdr_level)
{
    /* BEGIN SOLUTION */
    int level = lab12_parse_level(gdr_level);
    if (level == LAB12_UNSET)
        level = LAB12_P2C; /* NCCL_NET_GDR_C2C=1 (the default since 2.27); else PXB */
    return path <= level;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 3: GPUDirect RDMA: used when the GPU-NIC path is no farther
    //   than the level; unset level: P2C (NCCL's default with NCCL_NET_GDR_C2C=1).
    (void)path, (void)gdr_level;
    return -1;
    END SKELETON */
}

int lab12_p2p_enabled(lab12_path path, const char *p2p_disable, const char *p2p_level, int amd_x86,
                      int ngpus)
{
    /* BEGIN SOLUTION */
    int level = amd_x86 && ngpus <= 2 ? LAB12_SYS : LAB12_PXB;
    int user = LAB12_UNSET;
    if (p2p_disable && strtol(p2p_disable, NULL, 0) == 1)
        user = LAB12_LOC;
    else
        user = lab12_parse_level(p2p_level);
    if (user != LAB12_UNSET)
        level = user;
    return path <= level;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 4: P2P between two GPUs: used when the path is no farther than
    //   the level. Default PXB, or SYS on x86 AMD CPUs with at most 2 GPUs.
    //   NCCL_P2P_DISABLE read with strtol(..., 0) equal to 1 forces LOC; otherwise
    //   a valid NCCL_P2P_LEVEL replaces the default.
    (void)path, (void)p2p_disable, (void)p2p_level, (void)amd_x86, (void)ngpus;
    return -1;
    END SKELETON */
}

cl_result lab12_pin_alloc(size_t bytes, void **buf)
{
    /* BEGIN SOLUTION */
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CL_ERR_NOMEM;
    if (mlock(p, bytes) != 0) {
        munmap(p, bytes);
        cl_set_error("mlock of %zu bytes refused (raise `ulimit -l`)", bytes);
        return CL_ERR_UNSUPPORTED;
    }
    *buf = p;
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 5: page-locked memory.
    //   mmap() an anonymous private region, then mlock() it so that its pages stay
    //   resident (a DMA engine can then read them at any time). mlock refused:
    //   munmap, cl_set_error(...) naming `ulimit -l`, return CL_ERR_UNSUPPORTED.
    (void)bytes, (void)buf;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

void lab12_pin_free(void *buf, size_t bytes)
{
    /* BEGIN SOLUTION */
    if (buf) {
        munlock(buf, bytes);
        munmap(buf, bytes);
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    (void)buf, (void)bytes;
    END SKELETON */
}

/* BEGIN SOLUTION */
typedef struct stage {
    const void *src;
    size_t bytes, chunk;
    void *const *staging;
    const lab12_link *in;
    sem_t empty[2], full[2];
    cl_result rc;
} stage;

/* The reader: chunk k goes into staging buffer k % 2 once the writer has drained it. */
static void *reader(void *arg)
{
    stage *s = arg;
    for (size_t off = 0, k = 0; off < s->bytes; off += s->chunk, k++) {
        size_t n = s->bytes - off < s->chunk ? s->bytes - off : s->chunk;
        sem_wait(&s->empty[k % 2]);
        cl_result rc = lab12_link_copy(s->in, s->staging[k % 2], (const char *)s->src + off, n);
        if (rc != CL_OK)
            s->rc = rc;
        sem_post(&s->full[k % 2]);
    }
    return NULL;
}
/* END SOLUTION */

cl_result lab12_staged_copy(void *dst, const void *src, size_t bytes, size_t chunk,
                            void *const staging[2], const lab12_link *in, const lab12_link *out)
{
    /* BEGIN SOLUTION */
    if (chunk == 0)
        return CL_ERR_INVALID;
    stage s = {.src = src, .bytes = bytes, .chunk = chunk, .staging = staging, .in = in};
    for (int b = 0; b < 2; b++) {
        sem_init(&s.empty[b], 0, 1);
        sem_init(&s.full[b], 0, 0);
    }
    pthread_t th;
    if (pthread_create(&th, NULL, reader, &s) != 0)
        return CL_ERR_BACKEND;
    cl_result rc = CL_OK;
    for (size_t off = 0, k = 0; off < bytes; off += chunk, k++) {
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        sem_wait(&s.full[k % 2]);
        cl_result wrc = lab12_link_copy(out, (char *)dst + off, staging[k % 2], n);
        if (wrc != CL_OK)
            rc = wrc;
        sem_post(&s.empty[k % 2]);
    }
    pthread_join(th, NULL);
    for (int b = 0; b < 2; b++) {
        sem_destroy(&s.empty[b]);
        sem_destroy(&s.full[b]);
    }
    return rc != CL_OK ? rc : s.rc;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 6: the double-buffered pipeline on the CPU.
    //   Start one reader thread (pthread_create): for chunk k it waits until
    //   staging[k % 2] is empty, copies the chunk into it with
    //   lab12_link_copy(in, ...) and marks it full. The calling thread is the
    //   writer: waits until staging[k % 2] is full, drains it to dst with
    //   lab12_link_copy(out, ...) and marks it empty. Two semaphores per buffer
    //   (sem_init/sem_wait/sem_post) are enough. The last chunk may be short.
    (void)dst, (void)src, (void)bytes, (void)chunk, (void)staging, (void)in, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab12_pipeline_time(size_t bytes, size_t chunk, lab12_link in, lab12_link out)
{
    /* BEGIN SOLUTION */
    double read_prev = 0, write_prev = 0, write_prev2 = 0; /* R[k-1], W[k-1], W[k-2] */
    for (size_t off = 0; off < bytes && chunk > 0; off += chunk) {
        double n = (double)(bytes - off < chunk ? bytes - off : chunk);
        double read = (read_prev > write_prev2 ? read_prev : write_prev2) + in.latency_s +
                      n / in.bandwidth_Bps;
        double write = (write_prev > read ? write_prev : read) + out.latency_s +
                       n / out.bandwidth_Bps;
        read_prev = read;
        write_prev2 = write_prev;
        write_prev = write;
    }
    return write_prev;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 7: the pipeline model (see the handout's recurrence).
    //   R[k] = max(R[k-1], W[k-2]) + t_in(c_k);  W[k] = max(W[k-1], R[k]) + t_out(c_k)
    //   t(c) = latency + c / bandwidth; the answer is W of the last chunk (0 for 0 bytes).
    (void)bytes, (void)chunk, (void)in, (void)out;
    return -1.0;
    END SKELETON */
}

size_t lab12_best_chunk(size_t bytes, lab12_link in, lab12_link out)
{
    /* BEGIN SOLUTION */
    size_t best = 4096;
    double best_t = lab12_pipeline_time(bytes, best, in, out);
    for (size_t c = 8192; c / 2 < bytes; c *= 2) {
        double t = lab12_pipeline_time(bytes, c, in, out);
        if (t < best_t) {
            best = c;
            best_t = t;
        }
    }
    return best;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 8: try every power of two from 4096 up to the first one >= bytes
    //   with lab12_pipeline_time() and return the fastest (the smaller on a tie).
    (void)bytes, (void)in, (void)out;
    return 0;
    END SKELETON */
}

cl_result lab12_staged_h2d(void *dev_dst, const void *src, size_t bytes, size_t chunk)
{
    /* BEGIN SOLUTION */
#ifdef CL_HAVE_CUDA
    void *pinned[2] = {NULL, NULL};
    cudaStream_t stream[2] = {NULL, NULL};
    cudaEvent_t done[2] = {NULL, NULL};
    cl_result rc = CL_OK;
    for (int b = 0; b < 2 && rc == CL_OK; b++)
        if (cudaHostAlloc(&pinned[b], chunk, cudaHostAllocDefault) != cudaSuccess ||
            cudaStreamCreateWithFlags(&stream[b], cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming) != cudaSuccess)
            rc = CL_ERR_BACKEND;
    for (size_t off = 0, k = 0; off < bytes && rc == CL_OK; off += chunk, k++) {
        int b = (int)(k % 2);
        size_t n = bytes - off < chunk ? bytes - off : chunk;
        if (k >= 2 && cudaEventSynchronize(done[b]) != cudaSuccess) /* buffer b free again */
            rc = CL_ERR_BACKEND;
        memcpy(pinned[b], (const char *)src + off, n);
        if (cudaMemcpyAsync((char *)dev_dst + off, pinned[b], n, cudaMemcpyHostToDevice,
                            stream[b]) != cudaSuccess ||
            cudaEventRecord(done[b], stream[b]) != cudaSuccess)
            rc = CL_ERR_BACKEND;
    }
    for (int b = 0; b < 2; b++) {
        if (stream[b] && cudaStreamSynchronize(stream[b]) != cudaSuccess)
            rc = CL_ERR_BACKEND;
        if (done[b])
            cudaEventDestroy(done[b]);
        if (stream[b])
            cudaStreamDestroy(stream[b]);
        if (pinned[b])
            cudaFreeHost(pinned[b]);
    }
    if (rc != CL_OK)
        cl_set_error("CUDA: %s", cudaGetErrorString(cudaGetLastError()));
    return rc;
#else
    (void)dev_dst, (void)src, (void)bytes, (void)chunk;
    cl_set_error("built without CUDA");
    return CL_ERR_UNSUPPORTED;
#endif
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 9: the pipeline to a GPU (inside #ifdef CL_HAVE_CUDA).
    //   Two cudaHostAlloc'd staging buffers, two streams, one event per buffer.
    //   For chunk k, buffer b = k % 2: wait for b's event (its previous copy has
    //   left it), memcpy the chunk into it, cudaMemcpyAsync it to the device on
    //   stream b, record b's event. Then synchronise both streams and free all.
    //   Without CUDA: return CL_ERR_UNSUPPORTED.
    (void)dev_dst, (void)src, (void)bytes, (void)chunk;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
