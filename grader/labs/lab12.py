"""lab12: PCIe paths, GPUDirect RDMA / P2P decisions, the NIC of every GPU, staged copies.

The grader classifies every GPU-NIC and GPU-GPU path of the recorded hwloc topologies
itself, applies NCCL's level rules (NVIDIA/nccl src/graph/paths.cc: ncclGetLevel,
ncclTopoCheckGdr, ncclTopoCheckP2p) to every setting, and recomputes the pipeline model.
The harness scores the student's NIC assignment by the bandwidth all GPUs get at once
(max-min fair over the server's PCIe tree), and runs the student's staged copy over two
links it emulates (cpu: real time, sim: virtual time) or drives (gpu), counting every
byte through each link and tracking where every delivered byte came from; the copy is
timed against the harness's single-buffer copy in the same run and against the slowest
link's bound.
"""

import glob
import os
import random
import re
import xml.etree.ElementTree as ET

from gradelib import CheckFailed, Lab, expect, expect_close, perf_samples

lab = Lab("lab12", title="PCIe 与 GPUDirect", program="lab12")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATASETS = sorted(glob.glob(os.path.join(ROOT, "datasets", "hwloc", "*.xml")))

NAMES = ["LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"]
LOC, C2C, PIX, PXB, P2C, PHB, SYS, UNSET = 0, 3, 4, 5, 6, 8, 9, -2

# --- paths from the PCIe tree, written again from the handout ------------------------------


class Server:
    def __init__(self, path):
        self.parent = {}
        top = ET.parse(path).getroot().find("object")
        stack, objs = [(top, None)], []
        while stack:
            obj, par = stack.pop()
            self.parent[obj] = par
            objs.append(obj)
            stack.extend((c, obj) for c in reversed(obj.findall("object")))
        self.gpus, self.nics, self.vendor = [], [], ""
        for o in objs:
            if o.get("type") == "Package" and not self.vendor:
                info = [i.get("value") for i in o.findall("info") if i.get("name") == "CPUVendor"]
                self.vendor = info[0] if info else ""
            if o.get("type") != "PCIDev":
                continue
            cls, vendor = o.get("pci_type")[:4], o.get("pci_type").split("[")[1][:4]
            if vendor == "10de" and cls in ("0302", "0300"):
                self.gpus.append(o)
            fabric = [c.get("name") for c in o.findall("object")
                      if c.get("type") == "OSDev" and c.get("osdev_type") == "3"]
            if fabric:
                self.nics.append((o, fabric[0]))
        self.gpus.sort(key=lambda o: o.get("pci_busid"))
        self.nics.sort(key=lambda n: n[0].get("pci_busid"))

    def position(self, dev):
        chain, host, o = [], None, self.parent[dev]
        while o is not None and o.get("type") == "Bridge":
            if o.get("bridge_type", "").startswith("0-"):
                host, o = o, self.parent[o]
                break
            chain.append(o)
            o = self.parent[o]
        while o is not None and o.get("cpuset") is None:
            o = self.parent[o]
        nodes = [] if o is None else [c for c in o.findall("object")
                                       if c.get("type") == "NUMANode"]
        numa = int(nodes[0].get("os_index")) if len(nodes) == 1 else -1
        return dev.get("pci_busid"), numa, host, list(reversed(chain))

    def classify(self, a, b):
        ba, na, ha, ca = self.position(a)
        bb, nb, hb, cb = self.position(b)
        if ba == bb:
            return LOC
        if na != nb:
            return SYS
        if ha is None or ha is not hb:
            return PHB
        common = 0
        while common < min(len(ca), len(cb)) and ca[common] is cb[common]:
            common += 1
        if common == 0:
            return PHB
        return PIX if len(ca) - common <= 1 and len(cb) - common <= 1 else PXB


# --- NCCL's level rules -------------------------------------------------------------------

def strtol0(text):
    """C strtol(text, NULL, 0): leading blanks, a sign, 0x hex / 0 octal / decimal prefix."""
    m = re.match(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)?", text)
    if not m.group(2):
        return 0
    digits = m.group(2)
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits[0] == "0" \
        else int(digits)
    return -value if m.group(1) == "-" else value


def parse_level(value):
    if value is None:
        return UNSET
    if value in NAMES:
        return NAMES.index(value)
    if value[:1].isdigit():
        return [LOC, PIX, PXB, PHB, SYS, SYS][min(strtol0(value), 5)]
    return UNSET


def gdr_enabled(path, gdr):
    """ncclTopoCheckGdr (v2.28.9-1): level PXB unless NCCL_NET_GDR_LEVEL is valid; with
    NCCL_NET_GDR_C2C=1 (the default) a P2C distance counts as C2C."""
    level = parse_level(gdr)
    distance = C2C if path == P2C else path
    return int(distance <= (PXB if level == UNSET else level))


def p2p_enabled(path, dis, p2p, amd, ngpus):
    level = SYS if amd and ngpus <= 2 else PXB
    user = LOC if dis is not None and strtol0(dis) == 1 else parse_level(p2p)
    return int(path <= (level if user == UNSET else user))


LEVEL_VALUES = ["LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "0", "1", "2",
                "3", "4", "5", "9", "0x3", "3abc", "08", "pxb", "PHB ", "", "-1"]
SETTINGS = (["gdr=-;p2p=-;dis=-"] + [f"gdr={v};p2p={v};dis=-" for v in LEVEL_VALUES] +
            ["gdr=-;p2p=SYS;dis=1", "gdr=-;p2p=SYS;dis=0", "gdr=-;p2p=PIX;dis=0x1",
             "gdr=-;p2p=SYS;dis= 1", "gdr=-;p2p=-;dis=-;amd=1;ngpus=2",
             "gdr=-;p2p=-;dis=-;amd=1;ngpus=8", "gdr=-;p2p=PXB;dis=-;amd=1;ngpus=2"])


def parse_setting(text, amd, ngpus):
    s = {"gdr": None, "p2p": None, "dis": None, "amd": amd, "ngpus": ngpus, "path": -1}
    for kv in filter(None, text.split(";")):
        key, _, value = kv.partition("=")
        if key in ("amd", "ngpus", "path"):
            s[key] = int(value)
        else:
            s[key] = None if value == "-" else value
    return s


# --- the pipeline model -----------------------------------------------------------------

def pipeline_time(nbytes, chunk, nbuf, lin, lout):
    """The handout's recurrence: R[k] = max(R[k-1], W[k-nbuf]) + t_in(c_k),
    W[k] = max(W[k-1], R[k]) + t_out(c_k)."""
    r, w, last, off, k = 0.0, [0.0] * nbuf, 0.0, 0, 0
    while off < nbytes:
        n = min(chunk, nbytes - off)
        freed = w[k % nbuf] if k >= nbuf else 0.0
        r = max(r, freed) + lin[1] + n / lin[0]
        last = w[k % nbuf] = max(last, r) + lout[1] + n / lout[0]
        off += chunk
        k += 1
    return last


def best_time(nbytes, staging, lin, lout):
    """The fastest plan the handout allows: chunks of 4 KiB and up, 1..8 buffers."""
    best = None
    for nbuf in range(1, 9):
        c = 4096
        while c * nbuf <= staging:
            t = pipeline_time(nbytes, c, nbuf, lin, lout)
            best = t if best is None else min(best, t)
            if c >= nbytes:
                break
            c *= 2
    return best


# Host-to-device bandwidths published for two Azure VMs (Azure/AI-benchmarking-guide
# ND_A100_v4_results.md and ND_H200_v5_results.md) and NCCL's model value for PCIe Gen3
# x16 (12 GB/s, src/graph/topo.h); the per-copy latencies and the host memcpy bandwidth
# are model parameters chosen for the exercise, not measurements.
LINKS = {"nd-a100-v4": ((20e9, 2e-6), (26.28e9, 10e-6)),
         "nd-h200-v5": ((20e9, 2e-6), (52e9, 10e-6)),
         "gen3-x16": ((20e9, 2e-6), (12e9, 10e-6))}
SIZES = [256 << 10, 64 << 20, (1 << 30) + 12345]
PERF_SIZES = [4 << 20, 64 << 20, (1 << 30) + 12345]  # one that fits the staging memory, two not
STAGING = 64 << 20


def link_arg(link):
    return f"{link[0] / 1e9!r}:{link[1] * 1e6!r}"


def check_copies(rows, where):
    for r in rows:
        what = f"{where}: a {r['bytes']}-byte copy"
        if r["status"] != "success":
            raise CheckFailed(f"{what} failed: {r['error']}", expected="success",
                              found=r["status"])
        expect(f"{what}: hazards (a buffer read before it was filled, or refilled while read)",
               r["hazards"], 0)
        expect(f"{what}: bytes through link in", r["bytes_in"], r["bytes"])
        expect(f"{what}: bytes through link out", r["bytes_out"], r["bytes"])
        expect(f"{what}: bytes that arrived wrong", r["wrong_bytes"], 0)

def enc(value):
    """A setting for a case line: "-" unset, else its bytes in hex (values may hold blanks)."""
    return "-" if value is None else "x:" + value.encode().hex()


def setting_case(s):
    return {"gdr": enc(s["gdr"]), "p2p": enc(s["p2p"]), "dis": enc(s["dis"])}


def stem(path):
    return os.path.basename(path)[:-4]


# --- checks: paths, levels, decisions -------------------------------------------------------

def register_path_checks():
    for path in DATASETS:
        def check(ctx, path=path, name=stem(path)):
            server = Server(path)
            got = ctx.run_cases("paths", [{"file": os.path.relpath(path, ctx.root)}],
                                name=f"paths-{name}")[0]
            expect(f"{name}: status", got["status"], "success")
            expect(f"{name}: GPUs", got["gpus"], len(server.gpus))
            expect(f"{name}: NICs", got["nics"], len(server.nics))
            ng, nn = len(server.gpus), len(server.nics)
            for g, gpu in enumerate(server.gpus):
                for n, (nic, nic_name) in enumerate(server.nics):
                    expect(f"{name}: path GPU{g} ({gpu.get('pci_busid')}) - {nic_name}",
                           NAMES[got["gpu_nic"][g * nn + n]] if 0 <= got["gpu_nic"][g * nn + n] < 10
                           else got["gpu_nic"][g * nn + n], NAMES[server.classify(gpu, nic)])
                for h, other in enumerate(server.gpus):
                    v = got["gpu_gpu"][g * ng + h]
                    expect(f"{name}: path GPU{g} - GPU{h}", NAMES[v] if 0 <= v < 10 else v,
                           NAMES[server.classify(gpu, other)])

        lab.check(f"cpu.paths.{stem(path)}", f"PCIe path classes: {stem(path)}", points=8,
                  timeout=30)(check)


register_path_checks()


@lab.check("cpu.levels", "NCCL_NET_GDR_LEVEL / NCCL_P2P_LEVEL parsing and defaults", points=16,
           timeout=30)
def cpu_levels(ctx):
    cases, settings = [], []
    for path in (LOC, PIX, PXB, P2C, PHB, SYS):
        for text in SETTINGS:
            s = parse_setting(text, 0, 8)
            s["path"] = path
            settings.append(s)
            cases.append(dict(setting_case(s), path=path, amd=s["amd"], ngpus=s["ngpus"]))
    for row, s in zip(ctx.run_cases("levels", cases), settings):
        expect(f"status", row["status"], "success")
        expect(f"level read from NCCL_NET_GDR_LEVEL={s['gdr']!r}", row["gdr_level"],
               parse_level(s["gdr"]))
        expect(f"level read from NCCL_P2P_LEVEL={s['p2p']!r}", row["p2p_level"],
               parse_level(s["p2p"]))
        expect(f"GDR at path {NAMES[s['path']]} with NCCL_NET_GDR_LEVEL={s['gdr']!r}",
               row["gdr"], gdr_enabled(s["path"], s["gdr"]))
        expect(f"P2P at path {NAMES[s['path']]} with NCCL_P2P_DISABLE={s['dis']!r} "
               f"NCCL_P2P_LEVEL={s['p2p']!r} amd={s['amd']} ngpus={s['ngpus']}", row["p2p"],
               p2p_enabled(s["path"], s["dis"], s["p2p"], s["amd"], s["ngpus"]))


@lab.check("cpu.decide", "GDR and P2P decisions on every server and setting", points=10,
           timeout=60)
def cpu_decide(ctx):
    for path in DATASETS:
        server, name = Server(path), stem(path)
        amd, ng, nn = int(server.vendor == "AuthenticAMD"), len(server.gpus), len(server.nics)
        settings = [parse_setting(text, amd, ng) for text in SETTINGS]
        cases = [dict(setting_case(s), file=os.path.relpath(path, ctx.root), amd=s["amd"],
                      ngpus=s["ngpus"]) for s in settings]
        for text, s, row in zip(SETTINGS, settings, ctx.run_cases("decide", cases,
                                                                   name=f"decide-{name}")):
            expect(f"{name} [{text}]: status", row["status"], "success")
            for g, gpu in enumerate(server.gpus):
                for n, (nic, nic_name) in enumerate(server.nics):
                    expect(f"{name} [{text}]: GDR GPU{g}-{nic_name}", row["gdr"][g * nn + n],
                           gdr_enabled(server.classify(gpu, nic), s["gdr"]))
                for h, other in enumerate(server.gpus):
                    expect(f"{name} [{text}]: P2P GPU{g}-GPU{h}", row["p2p"][g * ng + h],
                           p2p_enabled(server.classify(gpu, other), s["dis"], s["p2p"], s["amd"],
                                       s["ngpus"]))


# The NICs' line rates and the SMP link of the servers with RDMA NICs. EFA: AWS's instance
# pages (p4d.24xlarge: 4 x 100 Gb/s; p5en.48xlarge: 16 x 200 Gb/s EFAv3). SMP: NCCL's
# figures (src/graph/topo.h): SKL_QPI_BW for the Cascade Lake 8275CL of p4d, SRP_QPI_BW
# for the Sapphire Rapids 8488C of p5en.
NIC_SERVERS = {"aws-p4d.24xlarge": (100, 10), "aws-p5en.48xlarge": (200, 22)}


@lab.check("cpu.assign", "The NIC of every GPU: bandwidth with all GPUs sending at once",
           points=10, timeout=60)
def cpu_assign(ctx):
    cases = []
    for path in DATASETS:
        if stem(path) in NIC_SERVERS:
            nic_gbps, smp_gbps = NIC_SERVERS[stem(path)]
            for _ in range(4):
                cases.append({"file": os.path.relpath(path, ctx.root),
                              "seed": random.randrange(1 << 30), "nic_gbps": nic_gbps,
                              "smp_gbps": smp_gbps})
    rows = ctx.run_cases("assign", cases)
    for case, row in zip(cases, rows):
        if row["status"] != "success":
            raise CheckFailed(f"{case['file']}: lab12_assign_nics failed: {row.get('error', '')}",
                              expected="success", found=row["status"])
    ctx.metric("assignments", [r["nic_of_gpu"] for r in rows])
    ctx.metric("gbps", [r["gbps"] for r in rows])
    ctx.metric("reference_gbps", [r["reference_gbps"] for r in rows])
    # The model is deterministic: every order of the devices must give the full bandwidth.
    for case, row in zip(cases, rows):
        if row["gbps"] < 0.99 * row["reference_gbps"]:
            raise CheckFailed(f"{os.path.basename(case['file'])}: your NICs give all GPUs "
                              f"{row['gbps']:.1f} GB/s together",
                              expected=f">= 99% of {row['reference_gbps']:.1f} GB/s (the closest "
                              f"NICs, spread over the GPUs)",
                              found=f"NIC of each GPU in bus order: {row['nic_of_gpu']}")


# --- checks: staged copies -------------------------------------------------------------------

@lab.check("cpu.pipe", "Staged copies of awkward sizes: every byte through both links, once",
           points=15, backend="cpu", timeout=60)
def cpu_pipe(ctx):
    data = ctx.run_lab("pipe", ["--in", "20:1", "--out", "20:1", "--staging", "1M"])
    check_copies(data["rows"], "cpu")
    expect("copies", len(data["rows"]), 5)


@lab.check("cpu.pipeperf", "Staged copy vs one staging buffer and vs the slowest link (64 MiB)",
           points=20, backend="cpu", timeout=90, kind="performance", parent="cpu.pipe")
def cpu_pipeperf(ctx, _):
    data = ctx.run_lab("pipeperf", ["--bytes", "64M", "--staging", "8M", "--in", "2:20",
                                    "--out", "1.6:20", "--rounds", "5"])
    row = data["rows"][0]
    check_copies([dict(row, status="success", error="", bytes_in=row["bytes_in"],
                       bytes_out=row["bytes_out"])], "cpu")
    ctx.metric("plan", {"chunk": row["chunk"], "nbuf": row["nbuf"]})
    ctx.metric("model_over_measured", row["model_s"] / sorted(row["student_s"])[2])
    # Paired: each of your copies ran right after the harness's, on the same links.
    perf_samples(ctx, student=row["student_s"], baseline=row["baseline_s"],
                 higher_is_better=False, low=1.1, high=1.4, unit="s",
                 name="your copy vs one staging buffer")
    # The bound is not measured in pairs: its thresholds leave room for a loaded machine.
    perf_samples(ctx, student=row["student_s"], baseline=[row["bound_s"]] * len(row["student_s"]),
                 higher_is_better=False, low=0.5, high=0.75, unit="s",
                 name="your copy vs the slowest link's bound")


@lab.check("sim.model", "Pipeline model equals the grader's", points=10, backend="sim",
           timeout=30)
def sim_model(ctx):
    cases = []
    for (lin, lout) in LINKS.values():
        for size in SIZES:
            for chunk in (4096, 65536, 1 << 20, (3 << 20) + 1, size):
                for nbuf in (1, 2, 3):
                    cases.append({"bytes": size, "chunk": chunk, "nbuf": nbuf, "bw_in": lin[0],
                                  "lat_in": lin[1], "bw_out": lout[0], "lat_out": lout[1]})
    for row, c in zip(ctx.run_cases("model", cases), cases):
        lin, lout = (c["bw_in"], c["lat_in"]), (c["bw_out"], c["lat_out"])
        expect_close(f"time of {c['bytes']} B in {c['chunk']}-byte chunks, {c['nbuf']} "
                     f"buffer(s) (out {lout[0] / 1e9:g} GB/s)", row["time_s"],
                     pipeline_time(c["bytes"], c["chunk"], c["nbuf"], lin, lout), rel=1e-9)


@lab.check("sim.pipeperf", "Simulated staged copies: your plan and schedule vs the best possible",
           points=15, backend="sim", timeout=60, kind="performance", parent="sim.model")
def sim_pipeperf(ctx, _):
    for size in PERF_SIZES:
        mine, best = [], []
        for name, (lin, lout) in LINKS.items():
            data = ctx.run_lab("pipeperf", ["--bytes", size, "--staging", STAGING, "--in",
                                            link_arg(lin), "--out", link_arg(lout), "--rounds",
                                            "1"], ranks=1, backend="sim",
                               name=f"sim-{name}-{size}.json")
            row = data["rows"][0]
            check_copies([dict(row, status="success", error="")], f"sim {name}")
            mine.append(row["student_s"][0])
            best.append(best_time(size, STAGING, lin, lout))
        # One score per size: a plan must suit small copies and large ones alike.
        perf_samples(ctx, student=mine, baseline=best, higher_is_better=False, low=0.8,
                     high=0.99, unit="s", name=f"your simulated copies of {size} B vs the best plan's")


@lab.check("gpu.pipe", "Staged host-to-GPU copies: every byte checked on the GPU", points=10,
           backend="gpu", needs={"gpus": 1}, timeout=120)
def gpu_pipe(ctx):
    data = ctx.run_lab("pipe", ["--staging", "8M"], ranks=1, backend="gpu")
    check_copies(data["rows"], "gpu")


@lab.check("gpu.pipeperf", "GPU staged copy vs one staging buffer and the slowest link",
           points=10, backend="gpu", needs={"gpus": 1}, timeout=120, kind="performance",
           parent="gpu.pipe")
def gpu_pipeperf(ctx, _):
    data = ctx.run_lab("pipeperf", ["--bytes", "256M", "--staging", "16M", "--rounds", "5"],
                       ranks=1, backend="gpu")
    row = data["rows"][0]
    check_copies([dict(row, status="success", error="")], "gpu")
    ctx.metric("h2d_GBps", data["bw_out"] / 1e9)
    ctx.metric("memcpy_GBps", data["bw_in"] / 1e9)
    perf_samples(ctx, student=row["student_s"], baseline=row["baseline_s"],
                 higher_is_better=False, low=1.1, high=1.4, unit="s",
                 name="your copy vs one staging buffer")
    perf_samples(ctx, student=row["student_s"], baseline=[row["bound_s"]] * len(row["student_s"]),
                 higher_is_better=False, low=0.6, high=0.85, unit="s",
                 name="your copy vs the slowest link's bound")
