/* libibverbs.c: the emulated verbs provider, built as libibverbs.so.1.
 *
 * The student's program is linked against rdma-core's libibverbs. On the emulated backend
 * the harness starts it with LD_LIBRARY_PATH pointing here, so this library is loaded in
 * its place: the same entry points, with the same symbol versions, and a context whose
 * ops (post_send, post_recv, poll_cq) serve the inline ibv_post_send(), ibv_post_recv()
 * and ibv_poll_cq() of <infiniband/verbs.h>. Nothing is decided here: every verb becomes a
 * request (verbs_msg.h) to the emulated HCA in the harness, through commlab_verbs_call(),
 * which the student's program exports (the lab's plug-in defines it). A verb that fails
 * returns what rdma-core returns (NULL with errno, or an errno value) and prints the
 * HCA's one-line reason on stderr, prefixed "verbs-emu:".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_msg.h"

#define EXPORT __attribute__((visibility("default")))

/* In the student's program (the lab's plug-in): send msg to the HCA, get the answer. */
extern int commlab_verbs_call(void *msg, unsigned long bytes) __attribute__((weak));

static int emu_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
static int emu_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
static int emu_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
static int emu_req_notify_cq(struct ibv_cq *cq, int solicited_only);
static int query_port_ex(struct ibv_context *context, uint8_t port_num,
                         struct ibv_port_attr *port_attr, size_t port_attr_len);

typedef struct emu_device {
    struct ibv_device dev; /* first: the list holds these */
    uint64_t guid;         /* network byte order */
} emu_device;

typedef struct emu_context {
    uint32_t handle;
    struct verbs_context v; /* its last member is the struct ibv_context we hand out */
} emu_context;

typedef struct emu_pd {
    struct ibv_pd pd;
    uint32_t h;
} emu_pd;

static emu_context *ectx(struct ibv_context *c)
{
    return (emu_context *)((char *)c - offsetof(emu_context, v.context));
}

/* One request: 0 and the answer in m, or the errno to return (ENOSYS outside a call of
 * the lab, when the harness cannot be reached). */
static int call(emu_msg *m, int op, uint32_t ctx, int n)
{
    m->op = (uint32_t)op;
    m->ctx = ctx;
    m->err = 0;
    if (!commlab_verbs_call || commlab_verbs_call(m, emu_msg_bytes(op, n)) != 0) {
        fprintf(stderr, "verbs-emu: the emulated HCA is out of reach (verbs work only inside "
                        "the lab's functions, in the program the harness started)\n");
        return ENOSYS;
    }
    if (m->err && m->why[0])
        fprintf(stderr, "verbs-emu: %.*s\n", (int)sizeof m->why, m->why);
    return m->err;
}

static emu_msg *new_msg(void)
{
    emu_msg *m = calloc(1, sizeof *m);
    if (!m)
        errno = ENOMEM;
    return m;
}

/* A verb that creates an object: its request in *m and the object (zeroed), or NULL with
 * errno ENOMEM. */
static void *new_obj(emu_msg **m, size_t bytes)
{
    void *obj = calloc(1, bytes);
    *m = new_msg();
    if (*m && obj)
        return obj;
    free(*m), free(obj);
    errno = ENOMEM;
    return NULL;
}

/* A creation that failed: its request and object freed, NULL with errno err. */
static void *drop(emu_msg *m, void *obj, int err)
{
    free(m), free(obj);
    errno = err;
    return NULL;
}

/* --- devices ----------------------------------------------------------------------------- */

EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
    emu_msg *m = new_msg();
    if (num_devices)
        *num_devices = 0;
    if (!m)
        return NULL;
    int err = call(m, EMU_DEVICES, 0, 0);
    int n = err ? 0 : m->u.devices.n;
    if (n < 0 || n > EMU_MAX_DEVICES)
        n = 0;
    struct ibv_device **list = calloc((size_t)n + 1, sizeof *list);
    int made = 0;
    for (; list && made < n; made++) {
        emu_device *d = calloc(1, sizeof *d);
        if (!d)
            break;
        const emu_device_info *info = &m->u.devices.dev[made];
        d->dev.node_type = (enum ibv_node_type)info->node_type;
        d->dev.transport_type = (enum ibv_transport_type)info->transport;
        snprintf(d->dev.name, sizeof d->dev.name, "%.63s", info->name);
        snprintf(d->dev.dev_name, sizeof d->dev.dev_name, "uverbs%d", made);
        snprintf(d->dev.dev_path, sizeof d->dev.dev_path, "/sys/class/infiniband_verbs/uverbs%d",
                 made);
        snprintf(d->dev.ibdev_path, sizeof d->dev.ibdev_path, "/sys/class/infiniband/%.63s",
                 info->name);
        d->guid = info->node_guid;
        list[made] = &d->dev;
    }
    free(m);
    if (!list || made < n) {
        ibv_free_device_list(list);
        errno = ENOMEM;
        return NULL;
    }
    if (num_devices)
        *num_devices = n;
    if (err)
        errno = err;
    return list;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    for (int i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
}

EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
    return device ? device->name : NULL;
}

EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
    return device ? (__be64)((emu_device *)device)->guid : 0;
}

EXPORT int ibv_get_device_index(struct ibv_device *device) { return device ? 0 : -1; }

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    emu_msg *m = new_msg();
    if (!m)
        return NULL;
    if (!device)
        return drop(m, NULL, EINVAL);
    snprintf(m->u.open.name, sizeof m->u.open.name, "%s", device->name);
    int err = call(m, EMU_OPEN, 0, 0);
    uint32_t h = m->u.open.ctx;
    free(m);
    if (err) {
        errno = err;
        return NULL;
    }
    emu_context *c = calloc(1, sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    c->handle = h;
    struct ibv_context *ctx = &c->v.context;
    ctx->device = device;
    ctx->cmd_fd = ctx->async_fd = -1;
    ctx->num_comp_vectors = 1;
    ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
    c->v.sz = sizeof c->v;
    c->v.query_port = query_port_ex;
    ctx->ops.post_send = emu_post_send;
    ctx->ops.post_recv = emu_post_recv;
    ctx->ops.poll_cq = emu_poll_cq;
    ctx->ops.req_notify_cq = emu_req_notify_cq;
    return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *context)
{
    emu_msg *m = new_msg();
    if (!m)
        return -1;
    int err = call(m, EMU_CLOSE, ectx(context)->handle, 0);
    free(m);
    if (err) {
        errno = err;
        return -1;
    }
    free(ectx(context));
    return 0;
}

EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
    emu_msg *m = new_msg();
    if (!m)
        return ENOMEM;
    int err = call(m, EMU_QUERY_DEVICE, ectx(context)->handle, 0);
    if (!err) {
        const emu_device_attr *a = &m->u.device_attr;
        memset(attr, 0, sizeof *attr);
        snprintf(attr->fw_ver, sizeof attr->fw_ver, "%s", a->fw_ver);
        attr->node_guid = a->node_guid, attr->sys_image_guid = a->sys_image_guid;
        attr->max_mr_size = a->max_mr_size, attr->page_size_cap = 0xfffff000;
        attr->vendor_id = a->vendor_id, attr->vendor_part_id = a->vendor_part_id;
        attr->hw_ver = a->hw_ver, attr->max_qp = a->max_qp, attr->max_qp_wr = a->max_qp_wr;
        attr->max_sge = a->max_sge, attr->max_cq = a->max_cq, attr->max_cqe = a->max_cqe;
        attr->max_mr = a->max_mr, attr->max_pd = a->max_pd;
        attr->max_qp_rd_atom = a->max_qp_rd_atom;
        attr->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
        attr->max_res_rd_atom = a->max_qp * a->max_qp_rd_atom;
        attr->atomic_cap = IBV_ATOMIC_NONE, attr->max_pkeys = 1, attr->local_ca_ack_delay = 16;
        attr->phys_port_cnt = (uint8_t)a->phys_port_cnt;
    }
    free(m);
    return err;
}

static int query_port_ex(struct ibv_context *context, uint8_t port_num,
                         struct ibv_port_attr *port_attr, size_t port_attr_len)
{
    emu_msg *m = new_msg();
    if (!m)
        return ENOMEM;
    m->u.port.port = port_num;
    int err = call(m, EMU_QUERY_PORT, ectx(context)->handle, 0);
    if (!err) {
        struct ibv_port_attr a;
        const emu_port_attr *p = &m->u.port.attr;
        memset(&a, 0, sizeof a);
        a.state = p->state, a.max_mtu = p->max_mtu, a.active_mtu = p->active_mtu;
        a.gid_tbl_len = p->gid_tbl_len, a.port_cap_flags = p->port_cap_flags;
        a.max_msg_sz = 1u << 30, a.pkey_tbl_len = (uint16_t)p->pkey_tbl_len;
        a.lid = p->lid, a.sm_lid = p->sm_lid, a.lmc = p->lmc, a.max_vl_num = 4;
        a.sm_sl = p->sm_sl, a.active_width = p->active_width, a.active_speed = p->active_speed;
        a.phys_state = p->phys_state, a.link_layer = p->link_layer;
        memcpy(port_attr, &a, port_attr_len < sizeof a ? port_attr_len : sizeof a);
    }
    free(m);
    return err;
}

/* The exported (compat) entry: the header's inline ibv_query_port() uses the context's
 * query_port op instead, but a program may call this one by address. */
#undef ibv_query_port
EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                          struct _compat_ibv_port_attr *port_attr)
{
    /* The old layout ends with link_layer (rdma-core's compat struct). */
    return query_port_ex(context, port_num, (struct ibv_port_attr *)port_attr,
                         offsetof(struct ibv_port_attr, flags));
}

static int gid_entry(struct ibv_context *context, int port, int index, union ibv_gid *gid,
                     int *type)
{
    emu_msg *m = new_msg();
    if (!m)
        return ENOMEM;
    m->u.gid.port = port;
    m->u.gid.index = index;
    int err = call(m, EMU_QUERY_GID, ectx(context)->handle, 0);
    if (!err) {
        memcpy(gid->raw, m->u.gid.gid.raw, 16);
        *type = m->u.gid.gid_type;
    }
    free(m);
    return err;
}

EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                         union ibv_gid *gid)
{
    int type;
    int err = gid_entry(context, port_num, index, gid, &type);
    if (err) {
        errno = err;
        return -1;
    }
    return 0; /* an empty entry reads as zeros, as from sysfs */
}

EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
                             struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
    union ibv_gid g;
    int type;
    if (flags || entry_size < sizeof *entry)
        return EINVAL;
    int err = gid_entry(context, (int)port_num, (int)gid_index, &g, &type);
    if (err)
        return err;
    if (type < 0)
        return ENODATA; /* an empty entry */
    memset(entry, 0, sizeof *entry);
    entry->gid = g;
    entry->gid_index = gid_index;
    entry->port_num = port_num;
    entry->gid_type = (uint32_t)type;
    entry->ndev_ifindex = type == IBV_GID_TYPE_IB ? 0 : 2;
    return 0;
}

EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
                                    size_t max_entries, uint32_t flags, size_t entry_size)
{
    struct ibv_port_attr pa;
    if (flags || entry_size < sizeof *entries)
        return -EINVAL;
    int err = query_port_ex(context, 1, &pa, sizeof pa);
    if (err)
        return -err;
    size_t n = 0;
    for (int i = 0; i < pa.gid_tbl_len && n < max_entries; i++) {
        int e = _ibv_query_gid_ex(context, 1, (uint32_t)i, &entries[n], 0, sizeof *entries);
        if (e == 0)
            n++;
        else if (e != ENODATA)
            return -e;
    }
    return (ssize_t)n;
}

EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
    (void)context;
    if (port_num != 1 || index != 0) {
        errno = EINVAL;
        return -1;
    }
    *pkey = htobe16(0xffff); /* the default partition, full membership */
    return 0;
}

/* --- protection domains and memory regions ------------------------------------------- */

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
    emu_msg *m;
    emu_pd *p = new_obj(&m, sizeof *p);
    if (!p)
        return NULL;
    int err = call(m, EMU_ALLOC_PD, ectx(context)->handle, 0);
    if (err)
        return drop(m, p, err);
    p->h = m->u.pd.pd;
    free(m);
    p->pd.context = context;
    p->pd.handle = p->h;
    return &p->pd;
}

/* The verb that destroys obj (handle h): 0 and obj freed, or the errno. */
static int destroy(struct ibv_context *context, int op, uint32_t h, void *obj)
{
    emu_msg *m = new_msg();
    if (!m)
        return ENOMEM;
    m->u.handle = h;
    int err = call(m, op, ectx(context)->handle, 0);
    free(m);
    if (!err)
        free(obj);
    return err;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    return destroy(pd->context, EMU_DEALLOC_PD, pd->handle, pd);
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                             int access)
{
    emu_msg *m;
    struct ibv_mr *mr = new_obj(&m, sizeof *mr);
    if (!mr)
        return NULL;
    m->u.mr.pd = pd->handle;
    m->u.mr.addr = (uint64_t)(uintptr_t)addr;
    m->u.mr.length = length;
    m->u.mr.iova = iova;
    m->u.mr.access = access;
    int err = call(m, EMU_REG_MR, ectx(pd->context)->handle, 0);
    if (err)
        return drop(m, mr, err);
    mr->context = pd->context;
    mr->pd = pd;
    mr->addr = addr;
    mr->length = length;
    mr->handle = m->u.mr.mr;
    mr->lkey = m->u.mr.lkey;
    mr->rkey = m->u.mr.rkey;
    free(m);
    return mr;
}

/* The emulated HCA translates keys by virtual address: iova must be the address. */
#undef ibv_reg_mr
EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    return reg_mr(pd, addr, length, (uintptr_t)addr, access);
}

static struct ibv_mr *reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                  unsigned int access)
{
    if (iova != (uintptr_t)addr) {
        fprintf(stderr, "verbs-emu: ibv_reg_mr_iova: the emulated HCA needs iova == addr\n");
        errno = EOPNOTSUPP;
        return NULL;
    }
    return reg_mr(pd, addr, length, iova, (int)(access & ~IBV_ACCESS_OPTIONAL_RANGE));
}

#undef ibv_reg_mr_iova
EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                      int access)
{
    return reg_mr_iova(pd, addr, length, iova, (unsigned)access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                       unsigned int access)
{
    return reg_mr_iova(pd, addr, length, iova, access);
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    return destroy(mr->context, EMU_DEREG_MR, mr->handle, mr);
}

/* --- completion queues ----------------------------------------------------------------- */

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                    struct ibv_comp_channel *channel, int comp_vector)
{
    if (channel || comp_vector) {
        fprintf(stderr, "verbs-emu: ibv_create_cq: completion channels are not emulated; "
                        "poll the CQ\n");
        errno = EOPNOTSUPP;
        return NULL;
    }
    emu_msg *m;
    struct ibv_cq *cq = new_obj(&m, sizeof *cq);
    if (!cq)
        return NULL;
    m->u.cq.cqe = cqe;
    int err = call(m, EMU_CREATE_CQ, ectx(context)->handle, 0);
    if (err)
        return drop(m, cq, err);
    cq->context = context;
    cq->cq_context = cq_context;
    cq->handle = m->u.cq.cq;
    cq->cqe = m->u.cq.cqe;
    free(m);
    return cq;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    return destroy(cq->context, EMU_DESTROY_CQ, cq->handle, cq);
}

static int emu_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    (void)cq, (void)solicited_only;
    fprintf(stderr, "verbs-emu: ibv_req_notify_cq: completion events are not emulated; poll "
                    "the CQ\n");
    return EOPNOTSUPP;
}

static int emu_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
    emu_msg *m = new_msg();
    if (!m)
        return -1;
    int want = num_entries < 0 ? -1 : num_entries > EMU_MAX_WC ? EMU_MAX_WC : num_entries;
    m->u.poll.cq = cq->handle;
    m->u.poll.n = want;
    int err = call(m, EMU_POLL_CQ, ectx(cq->context)->handle, want);
    int n = m->u.poll.n;
    if (err || n < 0) {
        free(m);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const emu_wc *e = &m->u.poll.wc[i];
        memset(&wc[i], 0, sizeof wc[i]);
        wc[i].wr_id = e->wr_id;
        wc[i].status = (enum ibv_wc_status)e->status;
        wc[i].opcode = (enum ibv_wc_opcode)e->opcode;
        wc[i].vendor_err = e->vendor_err;
        wc[i].byte_len = e->byte_len;
        wc[i].imm_data = e->imm_data;
        wc[i].qp_num = e->qp_num;
        wc[i].src_qp = e->src_qp;
        wc[i].wc_flags = e->wc_flags;
        wc[i].slid = e->slid;
    }
    free(m);
    return n;
}

/* --- queue pairs ------------------------------------------------------------------------- */

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    if (attr->srq) {
        fprintf(stderr, "verbs-emu: ibv_create_qp: shared receive queues are not emulated\n");
        errno = EOPNOTSUPP;
        return NULL;
    }
    emu_msg *m;
    struct ibv_qp *qp = new_obj(&m, sizeof *qp);
    if (!qp)
        return NULL;
    typeof(m->u.create_qp) *c = &m->u.create_qp;
    c->pd = pd->handle;
    c->send_cq = attr->send_cq ? attr->send_cq->handle : 0;
    c->recv_cq = attr->recv_cq ? attr->recv_cq->handle : 0;
    c->qp_type = attr->qp_type;
    c->sq_sig_all = attr->sq_sig_all;
    c->max_send_wr = attr->cap.max_send_wr, c->max_recv_wr = attr->cap.max_recv_wr;
    c->max_send_sge = attr->cap.max_send_sge, c->max_recv_sge = attr->cap.max_recv_sge;
    c->max_inline_data = attr->cap.max_inline_data;
    int err = call(m, EMU_CREATE_QP, ectx(pd->context)->handle, 0);
    if (err)
        return drop(m, qp, err);
    qp->context = pd->context;
    qp->qp_context = attr->qp_context;
    qp->pd = pd;
    qp->send_cq = attr->send_cq;
    qp->recv_cq = attr->recv_cq;
    qp->handle = c->qp;
    qp->qp_num = c->qp_num;
    qp->state = IBV_QPS_RESET;
    qp->qp_type = attr->qp_type;
    free(m);
    return qp;
}

static void ah_to_emu(const struct ibv_ah_attr *a, emu_ah *e)
{
    e->dlid = a->dlid, e->sl = a->sl, e->is_global = a->is_global, e->port_num = a->port_num;
    e->sgid_index = a->grh.sgid_index, e->hop_limit = a->grh.hop_limit;
    e->traffic_class = a->grh.traffic_class, e->flow_label = a->grh.flow_label;
    memcpy(e->dgid.raw, a->grh.dgid.raw, 16);
}

static void ah_from_emu(const emu_ah *e, struct ibv_ah_attr *a)
{
    memset(a, 0, sizeof *a);
    a->dlid = e->dlid, a->sl = e->sl, a->is_global = e->is_global, a->port_num = e->port_num;
    a->grh.sgid_index = e->sgid_index, a->grh.hop_limit = e->hop_limit;
    a->grh.traffic_class = e->traffic_class, a->grh.flow_label = e->flow_label;
    memcpy(a->grh.dgid.raw, e->dgid.raw, 16);
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
    emu_msg *m = new_msg();
    if (!m)
        return ENOMEM;
    emu_qp_attr *e = &m->u.qp.attr;
    m->u.qp.qp = qp->handle;
    m->u.qp.attr_mask = attr_mask;
    e->qp_state = attr->qp_state, e->cur_qp_state = attr->cur_qp_state;
    e->path_mtu = attr->path_mtu, e->rq_psn = attr->rq_psn, e->sq_psn = attr->sq_psn;
    e->dest_qp_num = attr->dest_qp_num, e->qp_access_flags = attr->qp_access_flags;
    ah_to_emu(&attr->ah_attr, &e->ah);
    e->pkey_index = attr->pkey_index, e->max_rd_atomic = attr->max_rd_atomic;
    e->max_dest_rd_atomic = attr->max_dest_rd_atomic, e->min_rnr_timer = attr->min_rnr_timer;
    e->port_num = attr->port_num, e->timeout = attr->timeout, e->retry_cnt = attr->retry_cnt;
    e->rnr_retry = attr->rnr_retry;
    int err = call(m, EMU_MODIFY_QP, ectx(qp->context)->handle, 0);
    free(m);
    if (!err && (attr_mask & IBV_QP_STATE))
        qp->state = attr->qp_state;
    return err;
}

EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
                        struct ibv_qp_init_attr *init_attr)
{
    (void)attr_mask;
    emu_msg *m = new_msg();
    if (!m)
        return ENOMEM;
    m->u.qp.qp = qp->handle;
    int err = call(m, EMU_QUERY_QP, ectx(qp->context)->handle, 0);
    if (!err) {
        const emu_qp_attr *e = &m->u.qp.attr;
        memset(attr, 0, sizeof *attr);
        attr->qp_state = (enum ibv_qp_state)e->qp_state;
        attr->cur_qp_state = (enum ibv_qp_state)e->cur_qp_state;
        attr->path_mtu = (enum ibv_mtu)e->path_mtu, attr->rq_psn = e->rq_psn;
        attr->sq_psn = e->sq_psn, attr->dest_qp_num = e->dest_qp_num;
        attr->qp_access_flags = e->qp_access_flags;
        ah_from_emu(&e->ah, &attr->ah_attr);
        attr->pkey_index = e->pkey_index, attr->max_rd_atomic = e->max_rd_atomic;
        attr->max_dest_rd_atomic = e->max_dest_rd_atomic, attr->min_rnr_timer = e->min_rnr_timer;
        attr->port_num = e->port_num, attr->timeout = e->timeout, attr->retry_cnt = e->retry_cnt;
        attr->rnr_retry = e->rnr_retry;
        attr->cap.max_send_wr = e->max_send_wr, attr->cap.max_recv_wr = e->max_recv_wr;
        attr->cap.max_send_sge = e->max_send_sge, attr->cap.max_recv_sge = e->max_recv_sge;
        attr->cap.max_inline_data = e->max_inline_data;
        qp->state = attr->qp_state;
        if (init_attr) {
            memset(init_attr, 0, sizeof *init_attr);
            init_attr->qp_context = qp->qp_context;
            init_attr->send_cq = qp->send_cq, init_attr->recv_cq = qp->recv_cq;
            init_attr->cap = attr->cap, init_attr->qp_type = qp->qp_type;
        }
    }
    free(m);
    return err;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
    return destroy(qp->context, EMU_DESTROY_QP, qp->handle, qp);
}

static int sges_to_emu(const struct ibv_sge *sg, int n, emu_sge *out)
{
    if (n < 0 || n > EMU_MAX_SGE)
        return ENOMEM; /* above the device's max_sge */
    for (int i = 0; i < n; i++)
        out[i].addr = sg[i].addr, out[i].length = sg[i].length, out[i].lkey = sg[i].lkey;
    return 0;
}

/* What differs between posting send and receive work requests. */
typedef struct wr_kind {
    int op;                                        /* EMU_POST_SEND or EMU_POST_RECV */
    int (*put)(emu_msg *m, int i, const void *wr); /* entry i of m: 0, or the errno refusing wr */
    const void *(*next)(const void *wr);
    void (*refuse)(void *bad_wr, const void *wr); /* *bad_wr = wr */
} wr_kind;

/* Posts the list from wr, EMU_MAX_WR a request. A WR the provider or the HCA refuses ends it
 * with its errno in *bad_wr, those before it posted, as rdma-core's providers do. */
static int post_list(struct ibv_qp *qp, const void *wr, void *bad_wr, const wr_kind *k)
{
    emu_msg *m = new_msg();
    if (!m) {
        k->refuse(bad_wr, wr);
        return ENOMEM;
    }
    int err = 0;
    while (wr && !err) {
        const void *first = wr;
        int n = 0;
        for (; wr && n < EMU_MAX_WR; wr = k->next(wr), n++)
            if ((err = k->put(m, n, wr)) != 0)
                break;
        if (err && n == 0)
            break;
        m->u.post.qp = qp->handle;
        m->u.post.n = n;
        m->u.post.bad = 0;
        int e = call(m, k->op, ectx(qp->context)->handle, n);
        if (e) {
            int bad = m->u.post.bad;
            wr = first;
            for (int i = 0; i < bad && wr; i++)
                wr = k->next(wr);
            err = e;
            break;
        }
    }
    free(m);
    if (err)
        k->refuse(bad_wr, wr);
    return err;
}

/* The bytes of an IBV_SEND_INLINE WR fit a request (any other WR fits). */
static int inline_fits(const struct ibv_send_wr *wr)
{
    size_t len = 0;
    for (int i = 0; (wr->send_flags & IBV_SEND_INLINE) && i < wr->num_sge; i++)
        len += wr->sg_list[i].length;
    return len <= EMU_MAX_INLINE;
}

static int put_send(emu_msg *m, int i, const void *w)
{
    const struct ibv_send_wr *wr = w;
    emu_send_wr *e = &m->u.send.wr[i];
    *e = (emu_send_wr){.wr_id = wr->wr_id,
                       .opcode = wr->opcode,
                       .send_flags = wr->send_flags,
                       .num_sge = wr->num_sge,
                       .remote_addr = wr->wr.rdma.remote_addr,
                       .rkey = wr->wr.rdma.rkey,
                       .imm_data = wr->imm_data};
    if (sges_to_emu(wr->sg_list, wr->num_sge, e->sg) != 0 || !inline_fits(wr)) {
        fprintf(stderr, "verbs-emu: ibv_post_send: more sges or inline bytes than the device "
                        "takes\n");
        return ENOMEM;
    }
    /* IBV_SEND_INLINE: the CPU copies the bytes now */
    for (int j = 0; (wr->send_flags & IBV_SEND_INLINE) && j < wr->num_sge; j++) {
        memcpy(e->inline_data + e->inline_len, (const void *)(uintptr_t)wr->sg_list[j].addr,
               wr->sg_list[j].length);
        e->inline_len += wr->sg_list[j].length;
    }
    return 0;
}

static int put_recv(emu_msg *m, int i, const void *w)
{
    const struct ibv_recv_wr *wr = w;
    emu_recv_wr *e = &m->u.recv.wr[i];
    *e = (emu_recv_wr){.wr_id = wr->wr_id, .num_sge = wr->num_sge};
    return sges_to_emu(wr->sg_list, wr->num_sge, e->sg) != 0 ? EINVAL : 0;
}

static const void *send_next(const void *wr) { return ((const struct ibv_send_wr *)wr)->next; }
static const void *recv_next(const void *wr) { return ((const struct ibv_recv_wr *)wr)->next; }
static void send_refuse(void *bad_wr, const void *wr)
{
    *(struct ibv_send_wr **)bad_wr = (struct ibv_send_wr *)wr;
}
static void recv_refuse(void *bad_wr, const void *wr)
{
    *(struct ibv_recv_wr **)bad_wr = (struct ibv_recv_wr *)wr;
}

static int emu_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    static const wr_kind sends = {
        .op = EMU_POST_SEND, .put = put_send, .next = send_next, .refuse = send_refuse};
    return post_list(qp, wr, bad_wr, &sends);
}

static int emu_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
    static const wr_kind recvs = {
        .op = EMU_POST_RECV, .put = put_recv, .next = recv_next, .refuse = recv_refuse};
    return post_list(qp, wr, bad_wr, &recvs);
}

/* --- what the emulated HCA does not have -------------------------------------------------- */

static void not_emulated(const char *what)
{
    fprintf(stderr,
            "verbs-emu: %s is not emulated (this lab needs RC QPs, polling and the verbs of its "
            "handout)\n",
            what);
}

/* A verb that creates what the HCA does not have: NULL with errno EOPNOTSUPP. */
static void *cannot_create(const char *what)
{
    not_emulated(what);
    errno = EOPNOTSUPP;
    return NULL;
}

EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
    (void)context;
    return cannot_create("ibv_create_comp_channel");
}
EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    (void)channel;
    return EOPNOTSUPP;
}
EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
    (void)channel, (void)cq, (void)cq_context;
    not_emulated("ibv_get_cq_event");
    return -1;
}
EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents) { (void)cq, (void)nevents; }
EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
    (void)context, (void)event;
    not_emulated("ibv_get_async_event");
    errno = EOPNOTSUPP;
    return -1;
}
EXPORT void ibv_ack_async_event(struct ibv_async_event *event) { (void)event; }
EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
    (void)pd, (void)attr;
    return cannot_create("ibv_create_ah (UD)");
}
EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
    (void)ah;
    return EOPNOTSUPP;
}
EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
    (void)pd, (void)attr;
    return cannot_create("ibv_create_srq");
}
EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
    (void)srq;
    return EOPNOTSUPP;
}
EXPORT int ibv_fork_init(void) { return 0; }
EXPORT enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_DISABLED; }

/* --- strings, as rdma-core spells them (libibverbs/enum_strs.c) ---------------------------- */

EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
    static const char *const s[] = {
        [IBV_WC_SUCCESS] = "success",
        [IBV_WC_LOC_LEN_ERR] = "local length error",
        [IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
        [IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
        [IBV_WC_LOC_PROT_ERR] = "local protection error",
        [IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
        [IBV_WC_MW_BIND_ERR] = "memory management operation error",
        [IBV_WC_BAD_RESP_ERR] = "bad response error",
        [IBV_WC_LOC_ACCESS_ERR] = "local access error",
        [IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
        [IBV_WC_REM_ACCESS_ERR] = "remote access error",
        [IBV_WC_REM_OP_ERR] = "remote operation error",
        [IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
        [IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
        [IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
        [IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
        [IBV_WC_REM_ABORT_ERR] = "aborted error",
        [IBV_WC_INV_EECN_ERR] = "invalid EE context number",
        [IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
        [IBV_WC_FATAL_ERR] = "fatal error",
        [IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
        [IBV_WC_GENERAL_ERR] = "general error",
    };
    if ((unsigned)status < sizeof s / sizeof s[0] && s[status])
        return s[status];
    return "unknown";
}

EXPORT const char *ibv_node_type_str(enum ibv_node_type t)
{
    return t == IBV_NODE_CA ? "InfiniBand channel adapter" : "unknown";
}

EXPORT const char *ibv_port_state_str(enum ibv_port_state s)
{
    static const char *const n[] = {"no state change (NOP)", "down", "init", "armed", "active",
                                    "active defer"};
    return (unsigned)s < 6 ? n[s] : "unknown";
}

EXPORT const char *ibv_event_type_str(enum ibv_event_type e)
{
    return e == IBV_EVENT_CQ_ERR ? "CQ error" : "unknown";
}
