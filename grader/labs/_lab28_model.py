"""lab28's model of a job's diagnostic bundle: a healthy state, the faults injected into it,
and the texts the real tools print for it.

Line formats, from NVIDIA/nccl v2.18.3-1: the INFO/WARN prefixes (src/debug.cc), "NCCL
version" (src/init.cc VERSION_STRING), "Bootstrap : Using" (src/bootstrap.cc), "NET/IB :
Using ... ; OOB" (src/transport/net_ib.cc), "NET/Socket : Using" (src/transport/net_socket.cc),
"Using network" (src/init.cc), "<NAME> set by environment to <v>." (src/misc/param.cc, and
src/graph/paths.cc for the levels), "Setting affinity for GPU" (src/graph/topo.cc, masks as
src/include/cpuset.h prints them), ring lines "Channel 00/02 :    0   1" (src/graph/rings.cc),
connection lines (src/transport/p2p.cc, shm.cc, net.cc), "GPU Direct RDMA Disabled for GPU"
(src/graph/paths.cc), "coll channels" (src/init.cc), the IB completion error
(src/transport/net_ib.cc). `nvidia-smi topo -m` and `ibstat` as their manuals and public
outputs show them (datasets/lab28/README.md).
"""

import random

CODES = ["socket", "p2p_disabled", "wrong_iface", "gdr_off", "ring_sys", "link_down",
         "version_mismatch", "ib_timeout", "pxn_off", "few_channels", "cpu_affinity"]

# The settings or tools a fix must name (any one of them), per fault.
FIX_WORDS = {
    "socket": ["NCCL_IB_DISABLE"],
    "p2p_disabled": ["NCCL_P2P_DISABLE"],
    "wrong_iface": ["NCCL_SOCKET_IFNAME"],
    "gdr_off": ["NCCL_NET_GDR_LEVEL", "nvidia-peermem", "nvidia_peermem"],
    "ring_sys": ["NCCL_GRAPH_FILE"],
    "link_down": ["mlxlink", "cable", "ibportstate", "transceiver"],
    "version_mismatch": ["version"],
    "ib_timeout": ["NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT"],
    "pxn_off": ["NCCL_PXN_DISABLE"],
    "few_channels": ["NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS"],
    "cpu_affinity": ["numactl", "cpu-bind", "cpu_bind", "taskset"],
}

MULTI_NODE_ONLY = {"socket", "gdr_off", "version_mismatch", "ib_timeout", "pxn_off"}

NCPUS = 128
SOCKET_CPUS = [list(range(0, 32)) + list(range(64, 96)), list(range(32, 64)) + list(range(96, 128))]
SOCKET_TEXT = ["0-31,64-95", "32-63,96-127"]


def new_state(rng, kind=None, nodes=None):
    kind = kind or rng.choice(["dgx", "pcie"])
    nodes = nodes or rng.choice([1, 2, 2])
    nics = 4 if kind == "dgx" else 2
    return {"kind": kind, "nodes": nodes, "nics": nics, "faults": [],
            "hosts": [f"{'dgx' if kind == 'dgx' else 'gpu'}-{rng.randrange(10, 90):02d}{i}"
                      for i in range(nodes)],
            "pids": [rng.randrange(2000, 90000) for _ in range(nodes * 8)],
            "version": rng.choice(["2.18.3+cuda12.2", "2.18.5+cuda12.2", "2.19.3+cuda12.3"]),
            "other_version": rng.choice(["2.17.1+cuda12.1", "2.16.5+cuda11.8"]),
            "down_nic": rng.randrange(nics), "down_node": rng.randrange(nodes),
            "degraded": rng.random() < 0.5, "rate": 200 if kind == "pcie" else 400,
            "bad_gpus": sorted(rng.sample(range(8), rng.randint(1, 3))),
            "timeout_node": rng.randrange(nodes), "iface": rng.choice(["docker0", "lo", "virbr0"]),
            "gdr_variant": rng.choice(["env", "peermem"])}


def inject(st, code):
    if code not in st["faults"]:
        st["faults"].append(code)


def possible(st):
    return [c for c in CODES if not (c in MULTI_NODE_ONLY and st["nodes"] < 2)
            and not (c == "ring_sys" and st["kind"] != "pcie")]


def faults(st):
    return sorted(set(st["faults"]))


# --- topology ------------------------------------------------------------------------------

def socket_of(g):
    return 0 if g < 4 else 1


def nic_of(st, g):
    return g // (8 // st["nics"])


def link(st, a, b):
    """nvidia-smi topo -m's relation between two GPUs."""
    if a == b:
        return "X"
    if st["kind"] == "dgx":
        return "NV12"
    if socket_of(a) != socket_of(b):
        return "SYS"
    return "PIX" if a // 2 == b // 2 else "NODE"


def gpu_nic(st, g, n):
    if st["kind"] == "dgx":
        return "PXB" if nic_of(st, g) == n else ("NODE" if socket_of(g) == (n * 2) // st["nics"]
                                                 else "SYS")
    return "PXB" if nic_of(st, g) == n else "SYS"


def render_topo(st):
    nics = [f"mlx5_{n}" for n in range(st["nics"])]
    cols = [f"GPU{g}" for g in range(8)] + nics
    out = ["\t" + "\t".join(cols) + "\tCPU Affinity\tNUMA Affinity"]
    for g in range(8):
        cells = [link(st, g, h) for h in range(8)] + [gpu_nic(st, g, n)
                                                     for n in range(st["nics"])]
        out.append(f"GPU{g}\t " + "\t".join(cells) + f"\t{SOCKET_TEXT[socket_of(g)]}\t"
                   f"{socket_of(g)}")
    for n in range(st["nics"]):
        cells = [gpu_nic(st, g, n) for g in range(8)] + [
            "X" if m == n else ("PIX" if st["kind"] == "dgx" and m // 2 == n // 2 else "SYS")
            for m in range(st["nics"])]
        out.append(f"{nics[n]}\t " + "\t".join(cells))
    out += ["", "Legend:", "",
            "  X    = Self",
            "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA "
            "nodes (e.g., QPI/UPI)",
            "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
            "Bridges within a NUMA node",
            "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
            "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe "
            "Host Bridge)",
            "  PIX  = Connection traversing at most a single PCIe bridge",
            "  NV#  = Connection traversing a bonded set of # NVLinks", ""]
    return "\n".join(out)


def render_ibstat(st, node):
    out = []
    for n in range(st["nics"]):
        bad = "link_down" in st["faults"] and node == st["down_node"] and n == st["down_nic"]
        if bad and not st["degraded"]:
            state, phys, rate = "Down", "Polling", 10
        elif bad:
            state, phys, rate = "Active", "LinkUp", st["rate"] // 4
        else:
            state, phys, rate = "Active", "LinkUp", st["rate"]
        guid = f"0x{0xb83fd20300a1b000 + node * 16 + n:016x}"
        out += [f"CA 'mlx5_{n}'", "\tCA type: MT4123" if st["kind"] == "pcie" else
                "\tCA type: MT4129", "\tNumber of ports: 1",
                "\tFirmware version: 20.37.1014" if st["kind"] == "pcie" else
                "\tFirmware version: 28.39.1002", "\tHardware version: 0",
                f"\tNode GUID: {guid}", f"\tSystem image GUID: {guid}", "\tPort 1:",
                f"\t\tState: {state}", f"\t\tPhysical state: {phys}", f"\t\tRate: {rate}",
                f"\t\tBase lid: {node * 8 + n + 1 if state == 'Active' else 65535}", "\t\tLMC: 0",
                "\t\tSM lid: 1", "\t\tCapability mask: 0xa651e848", f"\t\tPort GUID: {guid}",
                "\t\tLink layer: InfiniBand"]
    return "\n".join(out) + "\n"


def active_nics(st, node):
    return [n for n in range(st["nics"])
            if not ("link_down" in st["faults"] and node == st["down_node"] and
                    n == st["down_nic"] and not st["degraded"])]


# --- environment ------------------------------------------------------------------------------

def env_of(st, node):
    f = st["faults"]
    env = {"NCCL_DEBUG": "INFO", "CUDA_DEVICE_MAX_CONNECTIONS": "1",
           "NCCL_SOCKET_IFNAME": "ib0" if st["kind"] == "dgx" else "ens1f0",
           "NCCL_IB_HCA": ",".join(f"mlx5_{n}" for n in range(st["nics"])),
           "OMP_NUM_THREADS": "8"}
    if "socket" in f:
        env["NCCL_IB_DISABLE"] = "1"
    if "p2p_disabled" in f:
        env["NCCL_P2P_DISABLE"] = "1"
    if "wrong_iface" in f:
        env["NCCL_SOCKET_IFNAME"] = st["iface"]
    if "gdr_off" in f and st["gdr_variant"] == "env":
        env["NCCL_NET_GDR_LEVEL"] = "LOC"
    if "ring_sys" in f:
        env["NCCL_GRAPH_FILE"] = "/etc/nccl/graph.xml"
    if "pxn_off" in f:
        env["NCCL_PXN_DISABLE"] = "1"
    if "few_channels" in f:
        env["NCCL_MAX_NCHANNELS"] = "1" if st["nics"] <= 2 else "2"
    if "ib_timeout" in f:
        env["NCCL_IB_TIMEOUT"] = "8"
    if "cpu_affinity" in f:
        env["SLURM_CPU_BIND"] = "quiet,map_ldom:1,1,1,1,0,0,0,0"
    return env


def render_env(st, node):
    return "\n".join(f"{k}={v}" for k, v in sorted(env_of(st, node).items())) + "\n"


# --- the NCCL log ---------------------------------------------------------------------------

def cpuset_str(cpus):
    """src/include/cpuset.h ncclCpusetToStr over a 1024-bit cpu_set_t."""
    m = [0] * 128
    for c in cpus:
        m[c // 8] |= 1 << (c % 8)
    s, started = "", False
    for o in range(127, -1, -1):
        if not started and m[o] == 0:
            continue
        started = True
        s += "%02x" % m[o]
        if o and o % 4 == 0:
            s += ","
    return s


def ring_order(st):
    if "ring_sys" in st["faults"]:
        local = [0, 4, 1, 5, 2, 6, 3, 7]
    else:
        local = list(range(8))
    return [node * 8 + g for node in range(st["nodes"]) for g in local]


def coll_channels(st):
    if "few_channels" in st["faults"]:
        return 1 if st["nics"] <= 2 else 2
    return 4 * st["nics"] if st["kind"] == "dgx" else 2 * st["nics"]


def render_log(st, node, rng):
    f, env = st["faults"], env_of(st, node)
    host = st["hosts"][node]
    nranks = 8 * st["nodes"]
    ver = st["other_version"] if "version_mismatch" in f and node == 1 else st["version"]
    ip = f"10.1.{node}.{11 + node}" if st["kind"] == "dgx" else f"10.0.{node}.{21 + node}"
    iface = env["NCCL_SOCKET_IFNAME"]
    if "wrong_iface" in f:
        ip = {"docker0": "172.17.0.1", "lo": "127.0.0.1", "virbr0": "192.168.122.1"}[iface]
    lines = []

    def info(g, text):
        pid = st["pids"][node * 8 + g]
        lines.append(f"{host}:{pid}:{pid} [{g}] NCCL INFO {text}")

    def warn(g, where, text):
        pid = st["pids"][node * 8 + g]
        lines.append("")
        lines.append(f"{host}:{pid}:{pid + 7} [{g}] {where} NCCL WARN {text}")

    ring = ring_order(st)
    nch = coll_channels(st)
    for g in range(8):
        rank = node * 8 + g
        info(g, f"Bootstrap : Using {iface}:{ip}<0>")
        if rank == 0 or g == 0:
            info(g, "cudaDriverVersion 12020")
            info(g, f"NCCL version {ver}")
        for name in ("NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_PXN_DISABLE",
                     "NCCL_MAX_NCHANNELS", "NCCL_IB_TIMEOUT"):
            if name in env and name != "NCCL_P2P_DISABLE":
                info(g, f"{name} set by environment to {env[name]}.")
        if "NCCL_NET_GDR_LEVEL" in env:
            info(g, f"NCCL_NET_GDR_LEVEL set by environment to {env['NCCL_NET_GDR_LEVEL']}")
        if "NCCL_GRAPH_FILE" in env:
            info(g, f"NCCL_GRAPH_FILE set by environment to {env['NCCL_GRAPH_FILE']}")
        if "socket" in f:
            info(g, f"NET/Socket : Using [0]eth0:10.0.{node}.{31 + node}<0>")
            info(g, "Using network Socket")
        else:
            used = " ".join(f"[{i}]mlx5_{n}:1/IB" for i, n in enumerate(active_nics(st, node)))
            info(g, f"NET/IB : Using {used} ; OOB {iface}:{ip}<0>")
            info(g, "Using network IB")
        cpus = SOCKET_CPUS[socket_of(g)]
        if "cpu_affinity" in f and g in st["bad_gpus"]:
            cpus = SOCKET_CPUS[1 - socket_of(g)]
        info(g, f"Setting affinity for GPU {g} to {cpuset_str(cpus)}")
        if rank == 0:
            for c in range(nch):
                info(g, f"Channel {c:02d}/{nch:02d} : " + "".join(" %3d" % r for r in ring))
        pos = ring.index(rank)
        nxt = ring[(pos + 1) % nranks]
        for c in range(min(nch, 2)):
            if nxt // 8 == node:
                # NCCL's default P2P level on x86: no P2P across the host bridges (NODE, SYS)
                shm = "p2p_disabled" in f or link(st, g, nxt % 8) in ("NODE", "SYS")
                if shm:  # shm.cc prints no connection index
                    info(g, f"Channel {c:02d} : {rank}[{g}] -> {nxt}[{nxt % 8}] via "
                            "SHM/direct/direct")
                else:
                    info(g, f"Channel {c:02d}/0 : {rank}[{g}] -> {nxt}[{nxt % 8}] via P2P/IPC")
            else:
                net = "Socket" if "socket" in f else "IB"
                dev = 0 if net == "Socket" else nic_of(st, g)
                gdr = "" if net == "Socket" or "gdr_off" in f else "/GDRDMA"
                info(g, f"Channel {c:02d}/0 : {rank}[{g}] -> {nxt}[{nxt % 8}] [send] via "
                        f"NET/{net}/{dev}{gdr}")
        if "gdr_off" in f and "socket" not in f:
            busid = {0: "7000", 1: "f000", 2: "47000", 3: "4e000", 4: "87000", 5: "90000",
                     6: "b7000", 7: "bd000"}[g]
            if st["gdr_variant"] == "env":
                info(g, f"GPU Direct RDMA Disabled for GPU {busid} / HCA {nic_of(st, g)} "
                        f"(distance 4 > 0)")
            else:
                info(g, f"GPU Direct RDMA Disabled for GPU {busid} / HCA {nic_of(st, g)} "
                        f"(no peer memory support)")
        info(g, f"{nch} coll channels, 0 nvls channels, {nch} p2p channels, "
                f"{max(1, nch // 2)} p2p channels per peer")
        info(g, f"comm 0x{0x55d0c0000000 + rank * 0x1000:x} rank {rank} nranks {nranks} cudaDev "
                f"{g} busId {['7000', 'f000', '47000', '4e000', '87000', '90000', 'b7000', 'bd000'][g]}"
                f" commId 0x{rng.getrandbits(64):x} - Init COMPLETE")
    if "ib_timeout" in f and node == st["timeout_node"]:
        peer = f"10.1.{1 - node}.{12 - node}" if st["kind"] == "dgx" else f"10.0.{1 - node}.{22 - node}"
        g = rng.randrange(8)
        warn(g, "transport/net_ib.cc:1295",
             f"NET/IB : Got completion from peer {peer}<{rng.randrange(30000, 60000)}> with error 12,"
             f" opcode 0, len 0, vendor err 129 (Send)")
        warn(g, "proxy.cc:1384", "[Proxy Thread] Error encountered progressing operation=Send, "
                                 "res=3, closing connection")
    elif "ib_timeout" in f:
        g = rng.randrange(8)
        warn(g, "transport/net_ib.cc:1295",
             f"NET/IB : Got completion from peer {'10.1.0.11' if st['kind'] == 'dgx' else '10.0.0.21'}"
             f"<{rng.randrange(30000, 60000)}> with error 5, opcode 129, len 0, vendor err 249 (Recv)")
    return "\n".join(lines) + "\n"


def render(st, seed):
    rng = random.Random(seed)
    parts = []
    for node in range(st["nodes"]):
        host = st["hosts"][node]
        parts.append(f"### log {host}\n" + render_log(st, node, rng))
        parts.append(f"### env {host}\n" + render_env(st, node))
        parts.append(f"### topo {host}\n" + render_topo(st))
        parts.append(f"### ibstat {host}\n" + render_ibstat(st, node))
    return "".join(parts)


def generated_set(rng, n):
    """n bundles: a few healthy ones, the others with one to three faults each (one more here
    and there where a kind is rare), every kind of fault present, and a link both down and
    degraded."""
    out = []
    for i in range(n):
        st = new_state(rng, kind="pcie" if i % 3 == 0 else None,
                       nodes=2 if i % 2 else None)
        if i % 8 != 0:
            pool = possible(st)
            first = CODES[i % len(CODES)]
            picks = [first] if first in pool else []
            # Both forms of a bad link, whatever the draw: down where it is the job's first
            # fault, degraded (a quarter of the rate, still Active) in every fifth job, often
            # enough that a diagnoser blind to one form loses recall.
            if first == "link_down":
                st["degraded"] = False
            elif i % 5 == 2:
                picks.append("link_down")
                st["degraded"] = True
            picks += rng.sample(pool, rng.randint(0, 2))
            for c in picks:
                inject(st, c)
        out.append(st)
    # Every kind in more than 1/19 of all the faults, so that a diagnoser blind to one kind
    # stays below the recall of full marks (0.95) on every draw.
    faulty = [st for i, st in enumerate(out) if i % 8 != 0]
    while True:
        total = sum(len(st["faults"]) for st in out)
        rare = [c for c in CODES if 19 * sum(c in st["faults"] for st in out) <= total]
        if not rare:
            return out
        inject(rng.choice([st for st in faulty if rare[0] in possible(st)
                           and rare[0] not in st["faults"]]), rare[0])
