/* lab17.c: lab 17, multi-rail network design.
 *
 * You find the NIC (the rail) of every GPU as NCCL does, decide as NCCL does when a send
 * is relayed over NVLink to a GPU on the receiver's rail (PXN), and stripe one large
 * transfer over several rails, of equal or unequal speeds. Read labs/lab17/README.md
 * first; the TODOs below are in the order of its sections. Build with `make lab17`,
 * grade with `./grade lab17`.
 */
#include "lab17.h"
/* BEGIN SOLUTION */

static int local_of(const int8_t *type, const float *bw, int count, int stride, int *out)
{
    int min_type = LAB17_DIS, n = 0;
    float max_bw = 0;
    for (int i = 0; i < count; i++) {
        float b = bw[i * stride];
        int t = type[i * stride];
        if (b > max_bw || (b == max_bw && t < min_type)) {
            max_bw = b, min_type = t;
            n = 0;
        }
        if (b == max_bw && t == min_type)
            out[n++] = i;
    }
    return n;
}
/* END SOLUTION */

int lab17_local_nics(const lab17_server *s, int g, int *nics)
{
    /* BEGIN SOLUTION */
    return local_of(s->gpu_nic[g], s->gpu_nic_bw[g], s->nnics, 1, nics);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 1: the NICs of the highest bandwidth, then of the nearest type.
    (void)s, (void)g, (void)nics;
    return 0;
    END SKELETON */
}

int lab17_local_gpus(const lab17_server *s, int n, int *gpus)
{
    /* BEGIN SOLUTION */
    return local_of(&s->gpu_nic[0][n], &s->gpu_nic_bw[0][n], s->ngpus, LAB17_MAX_NICS, gpus);
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 1: the same from the NIC's side.
    (void)s, (void)n, (void)gpus;
    return 0;
    END SKELETON */
}
/* BEGIN SOLUTION */

static int is_pow2(int v) { return (v & (v - 1)) == 0; }

static int mirror_bits(int val, int pow2)
{
    int mirror = 0;
    for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1)
        if (val & b)
            mirror |= mb;
    return mirror;
}
/* END SOLUTION */

int lab17_gpu_nic(const lab17_server *s, const lab17_env *e, int g, int c)
{
    /* BEGIN SOLUTION */
    int local[LAB17_MAX_NICS], gpus[LAB17_MAX_GPUS];
    int count = lab17_local_nics(s, g, local);
    if (count == 0)
        return -1;
    int per_gpu; /* NCCL_NETDEVS_POLICY */
    if (e->netdevs_max == LAB17_POLICY_ALL) {
        per_gpu = count;
    } else if (e->netdevs_max > 0) {
        per_gpu = e->netdevs_max < count ? e->netdevs_max : count;
    } else { /* AUTO: the local NICs shared among the GPUs local to the first of them */
        int ngpus = lab17_local_gpus(s, local[0], gpus);
        per_gpu = ngpus ? (count + ngpus - 1) / ngpus : count;
    }
    int net = s->dev[g];
    if (is_pow2(count))
        net = mirror_bits(net, count);
    net += c % per_gpu;
    return local[net % count];
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 2: the local NIC of GPU g on channel c.
    (void)s, (void)e, (void)g, (void)c;
    return -1;
    END SKELETON */
}

int lab17_nic_gpu(const lab17_server *s, const lab17_env *e, int n)
{
    /* BEGIN SOLUTION */
    int gpus[LAB17_MAX_GPUS];
    int count = lab17_local_gpus(s, n, gpus);
    for (int c = 0; c < 64; c++)
        for (int i = 0; i < count; i++)
            if (lab17_gpu_nic(s, e, gpus[i], c) == n)
                return gpus[i];
    return -1;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 2: the GPU that NIC n belongs to.
    (void)s, (void)e, (void)n;
    return -1;
    END SKELETON */
}
/* BEGIN SOLUTION */

static int value(int32_t v, int fallback) { return v == LAB17_UNSET ? fallback : v; }

/* NCCL_PXN_C2C (default 1): how near the relay GPU must be to the NIC. */
static int pxn_type(const lab17_env *e) { return value(e->pxn_c2c, 1) ? LAB17_P2C : LAB17_PXB; }

/* The path type from GPU g to NIC n once NCCL has added its PXN paths (paths.cc,
 * ncclTopoComputePaths); *relay the GPU it goes through (g when direct). */
static int path_with_pxn(const lab17_server *s, const lab17_env *e, int g, int n, int *relay)
{
    int type = s->gpu_nic[g][n];
    *relay = g;
    if (value(e->pxn_disable, 0) == 1)
        return type;
    int p = lab17_nic_gpu(s, e, n);
    if (p == g || p < 0)
        return type;
    if (s->gpu_nic[p][n] <= pxn_type(e) && s->gdr[p][n] && s->gpu_gpu[p][g] <= LAB17_NVL &&
        (s->gpu_nic_bw[p][n] > s->gpu_nic_bw[g][n] || type > LAB17_PXN)) {
        *relay = p;
        return LAB17_PXN;
    }
    return type;
}
/* END SOLUTION */

void lab17_p2p_route(const lab17_server *s, const lab17_env *e, int g, int peer_dev, int c,
                     int *nic, int *proxy)
{
    /* BEGIN SOLUTION */
    *nic = lab17_gpu_nic(s, e, g, c);
    *proxy = g;
    int level = value(e->pxn_disable, 0) == 1 ? 0 : value(e->p2p_pxn_level, 2);
    int cross = value(e->cross_nic, 2);
    if (cross != 0 && level == 0)
        return;
    int local = -1; /* the GPU of this node with the peer's device index */
    for (int i = 0; i < s->ngpus; i++)
        if (s->dev[i] == peer_dev)
            local = i;
    if (local < 0)
        return;
    int net = lab17_gpu_nic(s, e, local, c);
    if (cross == 0)
        *nic = net;
    if (level == 1) {
        int relay;
        if (path_with_pxn(s, e, g, net, &relay) <= LAB17_PXN) {
            *nic = net;
            *proxy = relay;
        }
    } else if (level == 2) {
        int p = lab17_nic_gpu(s, e, net);
        if (p >= 0 && s->gpu_gpu[p][g] <= LAB17_NVL && s->gpu_nic[p][net] <= pxn_type(e)) {
            *proxy = p;
            *nic = net;
        }
    }
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 3: the NIC and the GPU that drives it for a send to peer_dev.
    (void)s, (void)e, (void)peer_dev, (void)c;
    *nic = -1;
    *proxy = g;
    END SKELETON */
}

int64_t lab17_p2p_chunk(const lab17_env *e, int nnodes, int all_nvlink)
{
    /* BEGIN SOLUTION */
    int64_t chunk =
        nnodes > 1   ? (e->p2p_net_chunksize == LAB17_UNSET ? 1 << 17 : e->p2p_net_chunksize)
        : all_nvlink ? (e->p2p_nvl_chunksize == LAB17_UNSET ? 1 << 19 : e->p2p_nvl_chunksize)
                     : (e->p2p_pci_chunksize == LAB17_UNSET ? 1 << 17 : e->p2p_pci_chunksize);
    int64_t buff = e->buffsize == LAB17_UNSET ? 1 << 22 : e->buffsize;
    if (chunk * 8 > buff) /* NCCL_STEPS slots of the Simple buffer */
        chunk = buff / 8;
    return chunk;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 4: NCCL's point-to-point chunk size.
    (void)e, (void)nnodes, (void)all_nvlink;
    return 0;
    END SKELETON */
}
/* BEGIN SOLUTION */

#define DEPTH 4 /* transfers kept in flight on each rail */

/* The part of the message each rail carries: contiguous, in proportion to its rate. */
static void shares(const lab17_rails *r, size_t bytes, size_t *start, size_t *len)
{
    double total = 0;
    for (int i = 0; i < r->k; i++)
        total += r->rate[i];
    size_t at = 0;
    for (int i = 0; i < r->k; i++) {
        size_t n = i == r->k - 1 ? bytes - at : (size_t)((double)bytes * r->rate[i] / total);
        start[i] = at, len[i] = n;
        at += n;
    }
}
/* END SOLUTION */

cl_result lab17_stripe(cl_comm *comm, const lab17_rails *r, size_t bytes, int sender)
{
    /* BEGIN SOLUTION */
    (void)sender; /* both sides post the same transfers */
    size_t start[LAB17_MAX_RAILS], len[LAB17_MAX_RAILS], done[LAB17_MAX_RAILS] = {0};
    lab17_xfer x[LAB17_MAX_RAILS][DEPTH] = {{{0}}};
    int head[LAB17_MAX_RAILS] = {0};
    shares(r, bytes, start, len);
    /* Every rail gets the same number of pieces, each in proportion to its rate, so the
     * rails finish a piece in the same time and posting them in turn keeps all of them busy.
     * The fastest rail's pieces: about a sixteenth of its share, 64 KiB to 4 MiB. */
    size_t most = 0, piece = 64 << 10;
    for (int i = 0; i < r->k; i++)
        most = len[i] > most ? len[i] : most;
    while (piece < most / 16 && piece < ((size_t)4 << 20))
        piece *= 2;
    size_t npieces = (most + piece - 1) / piece;
    for (size_t k = 0; k < npieces; k++)
        for (int i = 0; i < r->k; i++) {
            size_t each = (len[i] + npieces - 1) / npieces;
            size_t n = len[i] - done[i] < each ? len[i] - done[i] : each;
            if (n == 0)
                continue;
            lab17_xfer *slot = &x[i][head[i]];
            if (slot->id) /* the oldest of this rail's DEPTH must leave first */
                CL_CHECK(lab17_rail_wait(comm, slot));
            CL_CHECK(lab17_rail_post(comm, i, start[i] + done[i], n, slot));
            done[i] += n;
            head[i] = (head[i] + 1) % DEPTH;
        }
    for (int i = 0; i < r->k; i++)
        for (int d = 0; d < DEPTH; d++)
            if (x[i][d].id)
                CL_CHECK(lab17_rail_wait(comm, &x[i][d]));
    return CL_OK;
    /* END SOLUTION */
    /* BEGIN SKELETON
    // TODO(lab17) 5: stripe the message over the rails, every rail busy until the end.
    (void)comm, (void)r, (void)bytes, (void)sender;
    return CL_ERR_NOT_IMPLEMENTED;
    END SKELETON */
}
