"""Typical wrong answers in lab13 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("INIT without remote write access: the peer's WRITEs are refused",
           ".qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,",
           ".qp_access_flags = IBV_ACCESS_REMOTE_READ,",
           ["cpu.states", "cpu.write"]),
    Mutant("RTR expects its own PSN instead of the peer's",
           ".rq_psn = remote->psn,", ".rq_psn = c->psn,", ["cpu.states"]),
    Mutant("RoCE: the first RoCE v2 GID (link-local, not routable) instead of the IPv4 one",
           "return e->gid_type == IBV_GID_TYPE_ROCE_V2 && memcmp(e->gid.raw, mapped, 12) == 0;",
           "(void)mapped;\n    return e->gid_type == IBV_GID_TYPE_ROCE_V2;", ["cpu.roce"]),
    Mutant("path MTU fixed at 4096 instead of the port's active MTU",
           ".path_mtu = c->port_attr.active_mtu,", ".path_mtu = IBV_MTU_4096,", ["cpu.roce"]),
    Mutant("depth ignored: the whole send queue kept in flight",
           "posted - done < (size_t)depth", "posted - done < (size_t)c->max_wr",
           ["cpu.write", "cpu.plan"]),
    Mutant("completion status not checked: a failed WRITE reported as success",
           "            if (wc[i].status != IBV_WC_SUCCESS)\n"
           "                return bad_completion(&wc[i], \"RDMA WRITE\");\n",
           "", ["cpu.write"]),
    Mutant("remote address without the offset",
           ".remote_addr = remote->addr + at,", ".remote_addr = remote->addr + posted * msg,",
           ["cpu.write"]),
    Mutant("send CQ smaller than the completions that can be due: it overruns",
           "c->scq = ibv_create_cq(c->ctx, c->max_wr, NULL, NULL, 0);",
           "c->scq = ibv_create_cq(c->ctx, 4, NULL, NULL, 0);", ["cpu.write"]),
    Mutant("PD freed before its MR: ibv_dealloc_pd fails with EBUSY",
           "    if (c->mr && (err = ibv_dereg_mr(c->mr)) != 0)\n"
           "        cl_set_error(\"ibv_dereg_mr: %s\", strerror(err)), rc = CL_ERR_BACKEND;\n"
           "    if (c->pd && (err = ibv_dealloc_pd(c->pd)) != 0)\n"
           "        cl_set_error(\"ibv_dealloc_pd: %s\", strerror(err)), rc = CL_ERR_BACKEND;\n",
           "    if (c->pd && (err = ibv_dealloc_pd(c->pd)) != 0)\n"
           "        cl_set_error(\"ibv_dealloc_pd: %s\", strerror(err)), rc = CL_ERR_BACKEND;\n"
           "    if (c->mr && (err = ibv_dereg_mr(c->mr)) != 0)\n"
           "        cl_set_error(\"ibv_dereg_mr: %s\", strerror(err)), rc = CL_ERR_BACKEND;\n",
           ["cpu.close"]),
    Mutant("small SENDs not inline: the NIC reads 8 bytes from memory (slower)",
           "(bytes <= INLINE_BYTES ? IBV_SEND_INLINE : 0)", "0", ["cpu.latency"]),
    Mutant("plan: 64 KiB messages one at a time (the link idles between them)",
           ".msg_bytes = 8192,\n    .depth = 6,", ".msg_bytes = 65536,\n    .depth = 1,",
           ["cpu.plan"]),
    Mutant("plan: everything at the maximum (16 MiB in flight for a 25 KB pipe)",
           ".msg_bytes = 8192,\n    .depth = 6,", ".msg_bytes = 1048576,\n    .depth = 16,",
           ["cpu.plan"]),
]
