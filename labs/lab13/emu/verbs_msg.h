/* verbs_msg.h: the requests of the emulated verbs provider, from the provider library in the
 * student's program (libibverbs.c) to the emulated HCA in the harness (hca.c).
 *
 * The student's program loads the emulated libibverbs.so.1 in place of rdma-core's. Each
 * verb it implements becomes one request: a fixed-size message that travels to the harness
 * of the rank (cl_lab_call) and comes back with the answer. The HCA is the harness's: it
 * checks every field, as the kernel and the adapter check a real provider's commands, and
 * keeps every object (PD, MR, CQ, QP) on its side. The provider only keeps handles.
 *
 * Both sides include it; nothing here depends on the harness or on rdma-core's headers.
 */
#ifndef LAB13_VERBS_MSG_H
#define LAB13_VERBS_MSG_H

#include <stddef.h>
#include <stdint.h>

#define EMU_CALL_CODE   1301 /* the cl_lab_call code of every request */
#define EMU_MAX_WR      32   /* work requests per post message (a longer list takes several) */
#define EMU_MAX_SGE     4    /* scatter/gather entries per work request */
#define EMU_MAX_WC      64   /* completions per poll message */
#define EMU_MAX_INLINE  256  /* bytes of inline data per work request */
#define EMU_MAX_DEVICES 4
#define EMU_WHY         200

enum emu_op {
    EMU_DEVICES = 1, /* the devices of this node */
    EMU_OPEN,
    EMU_CLOSE,
    EMU_QUERY_DEVICE,
    EMU_QUERY_PORT,
    EMU_QUERY_GID,
    EMU_ALLOC_PD,
    EMU_DEALLOC_PD,
    EMU_REG_MR,
    EMU_DEREG_MR,
    EMU_CREATE_CQ,
    EMU_DESTROY_CQ,
    EMU_CREATE_QP,
    EMU_MODIFY_QP,
    EMU_QUERY_QP,
    EMU_DESTROY_QP,
    EMU_POST_SEND,
    EMU_POST_RECV,
    EMU_POLL_CQ,
    EMU_OP_COUNT
};

/* The values below use rdma-core's numbering (enum ibv_qp_state, ibv_wc_status, ...): the
 * provider copies them to and from the ibv_* structures without translation. */

typedef struct emu_gid {
    uint8_t raw[16];
} emu_gid;

typedef struct emu_device_info {
    char name[64];
    uint64_t node_guid; /* network byte order, as ibv_get_device_guid returns it */
    int node_type, transport;
} emu_device_info;

typedef struct emu_device_attr {
    char fw_ver[64];
    uint64_t node_guid, sys_image_guid, max_mr_size;
    uint32_t vendor_id, vendor_part_id, hw_ver;
    int max_qp, max_qp_wr, max_sge, max_cq, max_cqe, max_mr, max_pd;
    int max_qp_rd_atom, max_qp_init_rd_atom;
    int phys_port_cnt;
} emu_device_attr;

typedef struct emu_port_attr {
    int state, max_mtu, active_mtu, gid_tbl_len, pkey_tbl_len;
    uint32_t port_cap_flags;
    uint16_t lid, sm_lid;
    uint8_t lmc, sm_sl, active_width, active_speed, phys_state, link_layer;
} emu_port_attr;

typedef struct emu_ah {
    uint16_t dlid;
    uint8_t sl, is_global, port_num, sgid_index, hop_limit, traffic_class;
    emu_gid dgid;
    uint32_t flow_label;
} emu_ah;

typedef struct emu_qp_attr {
    int qp_state, cur_qp_state, path_mtu;
    uint32_t rq_psn, sq_psn, dest_qp_num, qp_access_flags;
    emu_ah ah;
    uint16_t pkey_index;
    uint8_t max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num, timeout, retry_cnt,
        rnr_retry;
    /* capabilities, for query */
    uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
} emu_qp_attr;

typedef struct emu_sge {
    uint64_t addr;
    uint32_t length, lkey;
} emu_sge;

typedef struct emu_send_wr {
    uint64_t wr_id;
    int opcode; /* IBV_WR_* */
    uint32_t send_flags;
    int num_sge;
    emu_sge sg[EMU_MAX_SGE];
    uint64_t remote_addr;
    uint32_t rkey, imm_data; /* imm_data: network byte order */
    uint32_t inline_len;     /* IBV_SEND_INLINE: the bytes the provider copied */
    uint8_t inline_data[EMU_MAX_INLINE];
} emu_send_wr;

typedef struct emu_recv_wr {
    uint64_t wr_id;
    int num_sge;
    emu_sge sg[EMU_MAX_SGE];
} emu_recv_wr;

typedef struct emu_wc {
    uint64_t wr_id;
    int status, opcode; /* IBV_WC_* */
    uint32_t vendor_err, byte_len, imm_data, qp_num, src_qp, wc_flags;
    uint16_t slid;
} emu_wc;

/* One request and its answer. `err` is the errno of the answer (0: success) and `why` a
 * line saying what was wrong, which the provider prints on stderr. */
typedef struct emu_msg {
    uint32_t op;
    int32_t err;
    char why[EMU_WHY];
    uint32_t ctx; /* the device context (0 for EMU_DEVICES and EMU_OPEN) */
    union {
        struct {
            int n;
            emu_device_info dev[EMU_MAX_DEVICES];
        } devices;
        struct {
            char name[64];
            uint32_t ctx; /* out */
        } open;
        emu_device_attr device_attr;
        struct {
            int port;
            emu_port_attr attr;
        } port;
        struct {
            int port, index;
            emu_gid gid;  /* out */
            int gid_type; /* out: IBV_GID_TYPE_IB, _ROCE_V1, _ROCE_V2 */
        } gid;
        struct {
            uint32_t pd; /* out for ALLOC_PD */
        } pd;
        struct {
            uint32_t pd;
            uint64_t addr, length, iova;
            int access;
            uint32_t mr, lkey, rkey; /* out */
        } mr;
        struct {
            int cqe;     /* in: asked; out: the CQ's size */
            uint32_t cq; /* out */
        } cq;
        struct {
            uint32_t pd, send_cq, recv_cq;
            int qp_type, sq_sig_all;
            uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
            uint32_t qp, qp_num; /* out */
        } create_qp;
        struct {
            uint32_t qp;
            int attr_mask;
            emu_qp_attr attr; /* in for MODIFY_QP, out for QUERY_QP */
        } qp;
        struct {
            uint32_t qp;
            int n;
            int bad; /* out: index of the first work request not posted */
        } post;      /* POST_SEND, POST_RECV: the head both lists below begin with */
        struct {
            uint32_t qp;
            int n;
            int bad; /* out: index of the first work request not posted */
            emu_send_wr wr[EMU_MAX_WR];
        } send;
        struct {
            uint32_t qp;
            int n;
            int bad;
            emu_recv_wr wr[EMU_MAX_WR];
        } recv;
        struct {
            uint32_t cq;
            int n; /* in: at most; out: returned (negative: the CQ is in error) */
            emu_wc wc[EMU_MAX_WC];
        } poll;
        uint32_t handle; /* DEALLOC_PD, DEREG_MR, DESTROY_CQ, DESTROY_QP */
    } u;
} emu_msg;

/* Bytes of a request for op, with n work requests or completions where it carries them:
 * what travels (the rest of the union stays home). */
static inline size_t emu_msg_bytes(int op, int n)
{
    const emu_msg *z = 0;
    size_t head = offsetof(emu_msg, u);
    n = n < 0 ? 0 : n;
    switch (op) {
    case EMU_POST_SEND:
        return head + offsetof(typeof(z->u.send), wr) +
               (size_t)(n > EMU_MAX_WR ? EMU_MAX_WR : n) * sizeof(emu_send_wr);
    case EMU_POST_RECV:
        return head + offsetof(typeof(z->u.recv), wr) +
               (size_t)(n > EMU_MAX_WR ? EMU_MAX_WR : n) * sizeof(emu_recv_wr);
    case EMU_POLL_CQ:
        return head + offsetof(typeof(z->u.poll), wc) +
               (size_t)(n > EMU_MAX_WC ? EMU_MAX_WC : n) * sizeof(emu_wc);
    default: {
        size_t big = sizeof z->u.devices;
        size_t parts[] = {sizeof z->u.open,  sizeof z->u.device_attr, sizeof z->u.port,
                          sizeof z->u.gid,   sizeof z->u.pd,          sizeof z->u.mr,
                          sizeof z->u.cq,    sizeof z->u.create_qp,   sizeof z->u.qp,
                          sizeof z->u.handle};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            big = parts[i] > big ? parts[i] : big;
        return head + big;
    }
    }
}

#endif /* LAB13_VERBS_MSG_H */
