/* lab17.c: lab 17, multi-rail network design.
 *
 * You find the NIC (the rail) of every GPU as NCCL does, decide as NCCL does when a send
 * is relayed over NVLink to a GPU on the receiver's rail (PXN), and stripe one large
 * transfer over several rails, of equal or unequal speeds. Read labs/lab17/README.md
 * first; the TODOs below are in the order of its sections. Build with `make lab17`,
 * grade with `./grade lab17`.
 */
#include "lab17.h"

int lab17_local_nics(const lab17_server *s, int g, int *nics)
{
    // TODO(lab17) 1: the NICs of the highest bandwidth, then of the nearest type.
    (void)s, (void)g, (void)nics;
    return 0;
}

int lab17_local_gpus(const lab17_server *s, int n, int *gpus)
{
    // TODO(lab17) 1: the same from the NIC's side.
    (void)s, (void)n, (void)gpus;
    return 0;
}

int lab17_gpu_nic(const lab17_server *s, const lab17_env *e, int g, int c)
{
    // TODO(lab17) 2: the local NIC of GPU g on channel c.
    (void)s, (void)e, (void)g, (void)c;
    return -1;
}

int lab17_nic_gpu(const lab17_server *s, const lab17_env *e, int n)
{
    // TODO(lab17) 2: the GPU that NIC n belongs to.
    (void)s, (void)e, (void)n;
    return -1;
}

void lab17_p2p_route(const lab17_server *s, const lab17_env *e, int g, int peer_dev, int c,
                     int *nic, int *proxy)
{
    // TODO(lab17) 3: the NIC and the GPU that drives it for a send to peer_dev.
    (void)s, (void)e, (void)peer_dev, (void)c;
    *nic = -1;
    *proxy = g;
}

int64_t lab17_p2p_chunk(const lab17_env *e, int nnodes, int all_nvlink)
{
    // TODO(lab17) 4: NCCL's point-to-point chunk size.
    (void)e, (void)nnodes, (void)all_nvlink;
    return 0;
}

cl_result lab17_stripe(cl_comm *comm, const lab17_rails *r, size_t bytes, int sender)
{
    // TODO(lab17) 5: stripe the message over the rails, every rail busy until the end.
    (void)comm, (void)r, (void)bytes, (void)sender;
    return CL_ERR_NOT_IMPLEMENTED;
}
