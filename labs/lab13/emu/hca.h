/* hca.h: the emulated RDMA adapter and fabric behind the emulated verbs provider.
 *
 * A fabric is a few nodes, one single-port HCA each, joined by one switch: InfiniBand
 * (LID routing) or RoCE v2 on a routed Ethernet fabric (each node in its own IPv4 subnet,
 * so only RoCE v2 GIDs with IPv4 addresses cross it). It lives in one block of memory that
 * every harness process of the run maps (the ranks' harnesses share it), behind one lock:
 * the provider in rank r's student program sends its requests (verbs_msg.h) to rank r's
 * harness, which calls hca_call() for node r. The host memory of node r is a range the
 * harness gives it (the ranks' shared region); RDMA moves bytes between those ranges.
 *
 * What it enforces, as the kernel, the adapter and the fabric do for a real HCA:
 *   - the QP state machine and, per transition, the required and allowed attribute masks
 *     (ibv_modify_qp(3)'s tables, the kernel's ib_modify_qp_is_ok) and their values;
 *   - object ownership and lifetime: a PD in use cannot be freed (EBUSY), nor a CQ with QPs;
 *   - lkey/rkey, the PD of the key, access flags of the MR and of the QP, MR bounds;
 *   - addressing: LID or GID (type and routability), destination QPN, PSN agreement,
 *     path MTU against the ports' active MTU; what cannot be delivered is retried
 *     (timeout, retry_cnt) and fails with IBV_WC_RETRY_EXC_ERR;
 *   - RNR: a SEND with no receive posted is retried (min_rnr_timer, rnr_retry) and fails
 *     with IBV_WC_RNR_RETRY_EXC_ERR;
 *   - send queue and CQ capacity: ENOMEM when max_send_wr work requests are outstanding,
 *     a CQ overrun when more completions are due than it holds;
 *   - RC ordering: completions in posting order; errors move the QP to the error state
 *     and flush what follows (IBV_WC_WR_FLUSH_ERR).
 *
 * Time is a model, not a measurement: each node has a virtual clock that the verbs calls
 * advance (posting, polling) and completions carry the virtual time at which the modelled
 * NIC and link would produce them (hca_model). Polling an empty CQ while a completion is
 * on its way moves the poller's clock to it, as spinning would. Only operations that wait
 * for the other side to progress (a receive not posted yet, a QP not ready yet) are
 * resolved in real time, bounded by the retry limits.
 */
#ifndef LAB13_HCA_H
#define LAB13_HCA_H

#include <stddef.h>
#include <stdint.h>

#include "verbs_msg.h"

enum hca_link { HCA_LINK_IB = 1, HCA_LINK_ROCE = 2 };

/* The model's parameters (seconds, bytes). */
typedef struct hca_model {
    const char *name;
    double wire_Bps;             /* the link's data rate, bytes per second */
    double hdr_bytes;            /* headers and trailers per packet on the wire */
    double wire_s;               /* one way through cables and the switch */
    double fetch_s;              /* doorbell to the NIC holding the WQE */
    double dma_s;                /* the NIC reading a payload from host memory (not inline) */
    double msg_gap_s;            /* the NIC's time per message of one QP (its message rate) */
    double rx_s;                 /* responder: last packet in to data placed and CQE written */
    double cqe_s;                /* requester: ACK in to CQE written */
    double post_s, post_extra_s; /* ibv_post_send: per call, per further WR of its list */
    double recv_s, recv_extra_s; /* ibv_post_recv */
    double poll_s, poll_cqe_s;   /* ibv_poll_cq: per call, per completion returned */
} hca_model;

extern const hca_model hca_model_ib;   /* HDR InfiniBand, 200 Gb/s */
extern const hca_model hca_model_roce; /* 200 GbE RoCE v2 */

typedef struct hca_fabric hca_fabric;

/* Bytes a fabric needs (one block, any alignment of 64). */
size_t hca_fabric_bytes(void);

/* Set up a fabric in mem (hca_fabric_bytes(), zeroed): nodes nodes on link, the lock
 * shared between processes when shared != 0. Without data (nodata), transfers are
 * timed but no byte moves (for the model's own sweeps). Returns the fabric. */
hca_fabric *hca_fabric_init(void *mem, int link, int nodes, int shared, int nodata);

/* Node n's host memory: [base, base + bytes). MRs must lie inside it. */
void hca_node_memory(hca_fabric *f, int n, uintptr_t base, size_t bytes);

/* Serve one request of node n's provider: msg (bytes long) is read and overwritten with
 * the answer. Never fails: problems are the answer's err and why. */
void hca_call(hca_fabric *f, int n, void *msg, size_t bytes);

/* --- what the harness reads --------------------------------------------------------- */

typedef struct hca_counters {
    long long calls;               /* requests served */
    long long writes, write_bytes; /* RDMA WRITEs completed successfully */
    long long sends, send_bytes;   /* SENDs completed successfully */
    long long recvs, recv_bytes;   /* receives completed successfully (responder) */
    long long reads, read_bytes;   /* RDMA READs completed successfully */
    long long min_len, max_len;    /* of the WRITEs (min_len -1 before any) */
    long long errors;              /* completions with an error status */
    int max_outstanding;           /* most send WRs outstanding on one QP */
    int overruns;                  /* CQ overruns */
    int inline_sends;              /* WRs posted with IBV_SEND_INLINE */
    double last_completion;        /* virtual time of the last completion produced */
    int first_error;               /* its IBV_WC_* status (0: none) */
} hca_counters;

/* Node n's counters since the last reset, and reset them. */
void hca_counters_get(hca_fabric *f, int n, hca_counters *out);
void hca_counters_reset(hca_fabric *f, int n);

/* Node n's virtual clock; and every node's clock set to the latest of them (the harness
 * does this before a timed call: the ranks start together). */
double hca_clock(hca_fabric *f, int n);
void hca_align_clocks(hca_fabric *f);

/* Live objects of node n, and those ever created / destroyed explicitly. */
typedef struct hca_objects {
    int ctx, pd, mr, cq, qp; /* live now */
    int created, destroyed;  /* explicit creations and destructions */
    int implicit;            /* freed by closing the device with them alive */
} hca_objects;
void hca_objects_get(hca_fabric *f, int n, hca_objects *out);

/* What the HCA knows of node n's QP qpn (0: its only or first QP): 0 when found. */
typedef struct hca_qp_view {
    uint32_t qpn, pd_handle;
    int state, path_mtu;
    emu_qp_attr attr;
    uint32_t mr_rkey; /* an MR of its PD that allows REMOTE_WRITE (0: none) */
    uint64_t mr_addr, mr_len;
    int mr_access;
} hca_qp_view;
int hca_qp_view_get(hca_fabric *f, int n, uint32_t qpn, hca_qp_view *out);

/* Port facts the harness reports: LID, active MTU (IBV_MTU_*), the GID at index i and
 * its type (-1 when empty). */
int hca_port_lid(hca_fabric *f, int n);
int hca_port_active_mtu(hca_fabric *f, int n);
int hca_port_gid(hca_fabric *f, int n, int index, emu_gid *gid);
int hca_roce_v2_ipv4_index(hca_fabric *f, int n);
const hca_model *hca_fabric_model(hca_fabric *f);

#endif /* LAB13_HCA_H */
