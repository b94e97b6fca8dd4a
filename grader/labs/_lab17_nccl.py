"""lab17's reference: NCCL's rules for a GPU's NIC, PXN and the point-to-point chunk size,
written again from NVIDIA/nccl v2.28.9-1 for the grader:

  src/graph/topo.cc    ncclTopoGetLocal, ncclTopoGetLocalNet, ncclTopoGetLocalGpu,
                       NCCL_NETDEVS_POLICY, mirrorBits (topo.h)
  src/graph/paths.cc   ncclTopoComputePaths (the PXN paths), NCCL_PXN_DISABLE, NCCL_PXN_C2C,
                       ncclTopoGetIntermediateRank
  src/graph/search.cc  ncclTopoGetNetDev (NCCL_P2P_PXN_LEVEL, NCCL_CROSS_NIC)
  src/init.cc          computeBuffSizes (NCCL_P2P_NET/NVL/PCI_CHUNKSIZE, NCCL_BUFFSIZE)

A server is the row the harness prints: gpus, nics, gpu_gpu, gpu_nic, gpu_nic_bw, gdr (flat,
row-major). An environment is a dict of the case's keys; absent means unset.
"""

NVL, PXB, P2C, PXN, DIS = 1, 5, 6, 7, 11
MAXCHANNELS = 64
ALL = -2


class Server:
    def __init__(self, row):
        self.G, self.N = row["gpus"], row["nics"]
        G, N = self.G, self.N
        self.gg = [row["gpu_gpu"][g * G:(g + 1) * G] for g in range(G)]
        self.gn = [row["gpu_nic"][g * N:(g + 1) * N] for g in range(G)]
        self.bw = [row["gpu_nic_bw"][g * N:(g + 1) * N] for g in range(G)]
        self.gdr = [row["gdr"][g * N:(g + 1) * N] for g in range(G)]
        self.dev = list(range(G))      # CUDA_DEVICE_ORDER=PCI_BUS_ID: the file's order


def _local(types, bws):
    best, out = None, []
    for i, (t, b) in enumerate(zip(types, bws)):
        if best is None or b > best[0] or (b == best[0] and t < best[1]):
            best, out = (b, t), []
        if (b, t) == best:
            out.append(i)
    return out


def local_nics(s, g):
    return _local(s.gn[g], s.bw[g])


def local_gpus(s, n):
    return _local([s.gn[g][n] for g in range(s.G)], [s.bw[g][n] for g in range(s.G)])


def _policy(env):
    p = env.get("policy")
    if p in (None, "-", "auto"):
        return 0
    if p == "all":
        return ALL
    return int(p.split(":")[1])


def _mirror(val, pow2):
    mirror, b, mb = 0, 1, pow2 >> 1
    while b < pow2:
        if val & b:
            mirror |= mb
        b <<= 1
        mb >>= 1
    return mirror


def gpu_nic(s, env, g, c):
    local = local_nics(s, g)
    if not local:
        return -1
    pol = _policy(env)
    if pol == ALL:
        per = len(local)
    elif pol > 0:
        per = min(pol, len(local))
    else:
        ng = len(local_gpus(s, local[0]))
        per = -(-len(local) // ng) if ng else len(local)
    net = s.dev[g]
    if len(local) & (len(local) - 1) == 0:
        net = _mirror(net, len(local))
    net += c % per
    return local[net % len(local)]


def nic_gpu(s, env, n):
    gpus = local_gpus(s, n)
    for c in range(MAXCHANNELS):
        for g in gpus:
            if gpu_nic(s, env, g, c) == n:
                return g
    return -1


def _val(env, key, default):
    v = env.get(key)
    if v in (None, "-"):
        return default
    return v if isinstance(v, int) else int(v, 0)


def _pxn_type(env):
    return P2C if _val(env, "pxn_c2c", 1) else PXB


def _path_with_pxn(s, env, g, n):
    t = s.gn[g][n]
    if _val(env, "pxn_disable", 0) == 1:
        return t, g
    p = nic_gpu(s, env, n)
    if p in (g, -1):
        return t, g
    if (s.gn[p][n] <= _pxn_type(env) and s.gdr[p][n] and s.gg[p][g] <= NVL
            and (s.bw[p][n] > s.bw[g][n] or t > PXN)):
        return PXN, p
    return t, g


def p2p_route(s, env, g, peer_dev, c):
    nic, proxy = gpu_nic(s, env, g, c), g
    level = 0 if _val(env, "pxn_disable", 0) == 1 else _val(env, "pxn_level", 2)
    cross = _val(env, "cross_nic", 2)
    if cross != 0 and level == 0:
        return nic, proxy
    local = [i for i in range(s.G) if s.dev[i] == peer_dev]
    if not local:
        return nic, proxy
    net = gpu_nic(s, env, local[-1], c)
    if cross == 0:
        nic = net
    if level == 1:
        t, relay = _path_with_pxn(s, env, g, net)
        if t <= PXN:
            nic, proxy = net, relay
    elif level == 2:
        p = nic_gpu(s, env, net)
        if p >= 0 and s.gg[p][g] <= NVL and s.gn[p][net] <= _pxn_type(env):
            nic, proxy = net, p
    return nic, proxy


def p2p_chunk(env, nnodes, all_nvlink):
    if nnodes > 1:
        chunk = _val(env, "net", 1 << 17)
    elif all_nvlink:
        chunk = _val(env, "nvl", 1 << 19)
    else:
        chunk = _val(env, "pci", 1 << 17)
    buff = _val(env, "buff", 1 << 22)
    return buff // 8 if chunk * 8 > buff else chunk
