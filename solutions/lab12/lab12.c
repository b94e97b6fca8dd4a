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
    /* BEGIN SOLUTION */
    if (strcmp(a->busid, b->busid) == 0)
        return LAB12_LOC;
    if (a->numa != b->numa)
        return LAB12_SYS;
    if (a->hostbridge != b->hostbridge || a->hostbridge < 0)
        return LAB12_PHB;
    int common = 0;
    while (common < a->nbridges && common < b->nbridges && a->bridge[common] == b->bridge[common])
        common++;
    if (common == 0)
        return LAB12_PHB;
    return a->nbridges - common <= 1 && b->nbridges - common <= 1 ? LAB12_PIX : LAB12_PXB;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 1: the PCIe path class of two devices (LOC, PIX, PXB, PHB or SYS),
    //   by the rules of the handout's section 1.
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
    // TODO(lab12) 2: a level as NCCL's ncclGetLevel() reads it: a path name, or a legacy
    //   number; LAB12_UNSET for NULL and anything else.
    (void)value;
    return LAB12_UNSET;
    END SKELETON */
}

int lab12_gdr_enabled(lab12_path path, const char *gdr_level)
{
    /* BEGIN SOLUTION */
    int level = lab12_parse_level(gdr_level);
    if (level == LAB12_UNSET)
        level = LAB12_PXB;
    /* NCCL_NET_GDR_C2C=1 (the default since 2.27.3): a NIC reached through the CPU
     * over C2C counts as C2C, not as P2C. */
    int distance = path == LAB12_P2C ? LAB12_C2C : path;
    return distance <= level;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 3: GPUDirect RDMA: used when the GPU-NIC distance is no farther than
    //   the level (PXB when unset); with NCCL_NET_GDR_C2C=1, NCCL's default, a P2C path
    //   counts as C2C.
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
    // TODO(lab12) 4: P2P between two GPUs: used when the path is no farther than the level;
    //   the default level, NCCL_P2P_DISABLE and NCCL_P2P_LEVEL as in the handout.
    (void)path, (void)p2p_disable, (void)p2p_level, (void)amd_x86, (void)ngpus;
    return -1;
    END SKELETON */
}

cl_result lab12_assign_nics(const lab12_pcipos *gpu, int ngpus, const lab12_pcipos *nic, int nnics,
                            int *nic_of_gpu)
{
    /* BEGIN SOLUTION */
    if (ngpus < 1 || nnics < 1 || ngpus > LAB12_MAX_DEVICES || nnics > LAB12_MAX_DEVICES) {
        cl_set_error("assign: %d GPUs, %d NICs", ngpus, nnics);
        return CL_ERR_INVALID;
    }
    /* As NCCL does: the NICs on the closest path, and among them the one fewest
     * GPUs use so far (a NIC's line rate is shared by every GPU that sends through it). */
    int users[LAB12_MAX_DEVICES] = {0};
    for (int g = 0; g < ngpus; g++) {
        int best = -1;
        lab12_path best_path = LAB12_SYS;
        for (int n = 0; n < nnics; n++) {
            lab12_path p = lab12_classify(&gpu[g], &nic[n]);
            if (best < 0 || p < best_path || (p == best_path && users[n] < users[best])) {
                best = n;
                best_path = p;
            }
        }
        nic_of_gpu[g] = best;
        users[best]++;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 5: give every GPU its NIC.
    //   All GPUs send at once: a NIC far from its GPU costs GPUDirect RDMA and maybe the SMP
    //   link; a NIC two GPUs share gives each half its line rate.
    (void)gpu, (void)ngpus, (void)nic, (void)nnics, (void)nic_of_gpu;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

double lab12_pipeline_time(size_t bytes, size_t chunk, int nbuf, lab12_link in, lab12_link out)
{
    /* BEGIN SOLUTION */
    if (chunk == 0 || nbuf < 1 || nbuf > LAB12_MAX_BUFS)
        return -1.0;
    /* R[k]: chunk k is in its buffer; W[k]: it has reached the destination. Buffer
     * k % nbuf is free again once chunk k - nbuf has left it. */
    double r_prev = 0, w[LAB12_MAX_BUFS] = {0}, w_prev = 0;
    size_t k = 0;
    for (size_t off = 0; off < bytes; off += chunk, k++) {
        double n = (double)(bytes - off < chunk ? bytes - off : chunk);
        double freed = k >= (size_t)nbuf ? w[k % (size_t)nbuf] : 0;
        double r = (r_prev > freed ? r_prev : freed) + in.latency_s + n / in.bandwidth_Bps;
        double wk = (w_prev > r ? w_prev : r) + out.latency_s + n / out.bandwidth_Bps;
        r_prev = r;
        w_prev = w[k % (size_t)nbuf] = wk;
    }
    return w_prev;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 6: the pipeline model of the handout (its recurrence).
    //   The time the last chunk reaches the destination; 0 for 0 bytes, -1 for a bad chunk or nbuf.
    (void)bytes, (void)chunk, (void)nbuf, (void)in, (void)out;
    return -1.0;
    END SKELETON */
}

cl_result lab12_plan(const lab12_job *job, size_t *chunk, int *nbuf)
{
    /* BEGIN SOLUTION */
    double best = -1;
    for (int b = 1; b <= LAB12_MAX_BUFS; b++)
        for (size_t c = 4096; c * (size_t)b <= job->staging_bytes; c *= 2) {
            double t = lab12_pipeline_time(job->bytes, c, b, job->in, job->out);
            if (best < 0 || t < best) {
                best = t;
                *chunk = c;
                *nbuf = b;
            }
            if (c >= job->bytes)
                break; /* larger chunks only waste staging memory */
        }
    if (best < 0) {
        cl_set_error("plan: %zu bytes of staging cannot hold one 4 KiB chunk", job->staging_bytes);
        return CL_ERR_INVALID;
    }
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 7: choose the chunk and the number of buffers with the smallest modelled time.
    //   Chunks: powers of two from 4 KiB; 1..LAB12_MAX_BUFS buffers; nbuf * chunk <= staging.
    (void)job, (void)chunk, (void)nbuf;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}

cl_result lab12_staged_copy(cl_comm *comm, const lab12_job *job, size_t chunk, int nbuf)
{
    /* BEGIN SOLUTION */
    size_t n = chunk ? (job->bytes + chunk - 1) / chunk : 0;
    lab12_copy in[LAB12_MAX_BUFS], out[LAB12_MAX_BUFS];
    CL_CHECK(lab12_stage(comm, nbuf, chunk));
    /* Fill every buffer; afterwards chunk k reuses buffer k % nbuf once chunk k - nbuf
     * has left it. Each link keeps its queue: out(k) is posted while out(k-1) still runs. */
    for (size_t k = 0; k < n && k < (size_t)nbuf; k++)
        CL_CHECK(lab12_copy_in(comm, (int)k, k * chunk,
                               job->bytes - k * chunk < chunk ? job->bytes - k * chunk : chunk,
                               &in[k]));
    for (size_t k = 0; k < n; k++) {
        int b = (int)(k % (size_t)nbuf);
        size_t len = job->bytes - k * chunk < chunk ? job->bytes - k * chunk : chunk;
        if (k >= (size_t)nbuf) {
            CL_CHECK(lab12_wait(comm, &out[b])); /* chunk k - nbuf has left buffer b */
            CL_CHECK(lab12_copy_in(comm, b, k * chunk, len, &in[b]));
        }
        CL_CHECK(lab12_wait(comm, &in[b]));
        CL_CHECK(lab12_copy_out(comm, b, k * chunk, len, &out[b]));
    }
    for (size_t k = n > (size_t)nbuf ? n - (size_t)nbuf : 0; k < n; k++)
        CL_CHECK(lab12_wait(comm, &out[k % (size_t)nbuf]));
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab12) 8: the staged copy, chunk by chunk, with the given link operations.
    //   Every byte goes through link in and then link out exactly once. A buffer may be
    //   refilled only after its last chunk has left it, and drained only after it is full.
    (void)comm, (void)job, (void)chunk, (void)nbuf;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
