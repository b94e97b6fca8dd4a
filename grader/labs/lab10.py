"""lab10: CPU/NUMA affinity with hwloc.

On every recorded hwloc topology in datasets/hwloc the grader finds the GPUs, the RDMA
NICs, their local cpusets, each rank's NIC and cpuset and every binding option again,
from the XML with its own code, and compares. It scores the plan's consequence with the
handout's host-to-device model (PCIe link speeds from the XML, NCCL's inter-socket
bandwidths), which needs no second NUMA node. The binding check reads the student
program's affinity from the kernel (sched_getaffinity of its pid, the CPU it last ran
on) instead of trusting the code. The bandwidth check needs two NUMA nodes and says so
where there is one; the GPU check compares `nvidia-smi topo -m` with the plan of this
machine, both read by this spec.
"""

import glob
import os
import re
import xml.etree.ElementTree as ET

from gradelib import CheckFailed, Lab, expect, perf_ratio, perf_samples
from gradelib.answers import check_answer, read_answers, score_answers

lab = Lab("lab10", title="CPU/NUMA 亲和性绑定", program="lab10",
          student_files=["labs/lab10/lab10.c", "labs/lab10/answers.txt"])

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATASETS = sorted(glob.glob(os.path.join(ROOT, "datasets", "hwloc", "*.xml")))
IO_TYPES = {"Bridge", "PCIDev", "OSDev", "Misc"}
# NCCL's inter-socket bandwidth (GB/s) by CPU, NVIDIA/nccl v2.28.9-1 src/graph/topo.h:
# SKL_QPI_BW (Skylake-SP and Cascade Lake), SRP_QPI_BW (Sapphire Rapids), P9_BW (POWER).
SOCKET_GBPS = [(r"Platinum 82\d\d", 10.0), (r"Platinum 84\d\d", 22.0), (r"POWER", 32.0)]


# --- the model, written again from the handout ------------------------------------------

def parse_set(text):
    """An hwloc bitmap string ("0x000000ff,0xffff0000,,0x1") as a set of integers."""
    value = 0
    for word in text.split(","):
        value = (value << 32) | (int(word, 16) if word else 0)
    return {i for i in range(value.bit_length()) if value >> i & 1}


def list_str(cpus):
    """hwloc's list format: "0-23,48-71"."""
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def parse_list(text):
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def mask_str(cpus):
    return hex(sum(1 << c for c in cpus))


class Server:
    """GPUs, NICs and the object tree of one hwloc XML file."""

    def __init__(self, path):
        self.parent, self.objs = {}, []
        top = ET.parse(path).getroot().find("object")
        stack = [(top, None)]
        while stack:
            obj, par = stack.pop()
            self.parent[obj] = par
            self.objs.append(obj)
            stack.extend((c, obj) for c in reversed(obj.findall("object")))
        self.gpus, self.nics = [], []
        for o in self.objs:
            if o.get("type") != "PCIDev":
                continue
            cls, vendor = o.get("pci_type")[:4], o.get("pci_type").split("[")[1][:4]
            if vendor == "10de" and cls in ("0302", "0300"):
                self.gpus.append(o)
            fabric = [c for c in o.findall("object")
                      if c.get("type") == "OSDev" and c.get("osdev_type") == "3"]
            if fabric:
                self.nics.append((o, fabric[0].get("name")))
        self.gpus.sort(key=lambda o: o.get("pci_busid"))
        self.nics.sort(key=lambda n: n[0].get("pci_busid"))
        self.numa = {int(o.get("os_index")): parse_set(o.get("cpuset"))
                     for o in self.objs if o.get("type") == "NUMANode"}
        models = [i.get("value") for i in ET.parse(path).getroot().iter("info")
                  if i.get("name") == "CPUModel"]
        self.cpu_model = models[0] if models else ""

    def ancestors(self, obj):
        chain = []
        while obj is not None:
            chain.append(obj)
            obj = self.parent[obj]
        return chain

    def local_cpus(self, obj):
        for a in self.ancestors(obj):
            if a.get("type") not in IO_TYPES:
                return parse_set(a.get("cpuset"))
        raise AssertionError("no non-I/O ancestor")

    def hops(self, a, b):
        up_b = self.ancestors(b)
        for i, x in enumerate(self.ancestors(a)):
            if x in up_b:
                return i + up_b.index(x)
        return 1 << 20

    def plan(self):
        """[(nic index or -1, cpuset)] for rank r = GPU r."""
        users, ranks = [0] * len(self.nics), []
        for g in self.gpus:
            best = -1
            for n, (nic, _) in enumerate(self.nics):
                if best < 0 or (self.hops(g, nic), users[n]) < (self.hops(g, self.nics[best][0]),
                                                                 users[best]):
                    best = n
            cpus = self.local_cpus(g)
            if best >= 0:
                users[best] += 1
                near = self.local_cpus(self.nics[best][0])
                if cpus & near:
                    cpus = cpus & near
            ranks.append((best, cpus))
        return ranks

    def nodes_of(self, cpus):
        return sorted(n for n, c in self.numa.items() if c & cpus)

    def options(self, host="localhost"):
        sets = [cpus for _, cpus in self.plan()]
        maps = []
        for r, s in enumerate(sets):
            k = sum(1 for q in range(r) if sets[q] == s)
            maps.append(sorted(s)[k % len(s)])
        per_node = max(sum(1 for s in sets if s <= c) for c in self.numa.values())
        return {
            "cpulist": "|".join(list_str(s) for s in sets),
            "taskset": "|".join(f"taskset -c {list_str(s)}" for s in sets),
            "numactl": "|".join(f"numactl --physcpubind={list_str(s)} "
                                f"--membind={list_str(self.nodes_of(s))}" for s in sets),
            "slurm_mask": "--cpu-bind=mask_cpu:" + ",".join(mask_str(s) for s in sets),
            "slurm_map": "--cpu-bind=map_cpu:" + ",".join(str(c) for c in maps),
            "ompi_cpuset": "--cpu-set " + list_str(set().union(*sets)),
            "ompi_map": (f"--map-by ppr:{per_node}:numa --bind-to core" if per_node
                         else "--bind-to none"),
            "rankfile": "".join(f"rank {r}={host} slot={list_str(s)}\n"
                                for r, s in enumerate(sets)),
        }

    # -- the host-to-device model of the handout --
    def socket_gbps(self):
        for pattern, gbps in SOCKET_GBPS:
            if re.search(pattern, self.cpu_model):
                return gbps
        raise AssertionError(f"no inter-socket bandwidth for {self.cpu_model!r}")

    def h2d(self, membind):
        """Per-rank GB/s of 8 (n) simultaneous host-to-device copies, rank r's host memory
        on NUMA nodes membind[r]: a rank whose memory is only on its GPU's node gets its
        PCIe link; any other crosses the inter-socket link into the GPU's node, shared
        equally by every such rank."""
        home = [self.nodes_of(self.local_cpus(g)) for g in self.gpus]
        link = [float(g.get("pci_link_speed")) for g in self.gpus]
        remote = [membind[r] != home[r] for r in range(len(self.gpus))]
        crossing = {}
        for r, far in enumerate(remote):
            if far:
                crossing[tuple(home[r])] = crossing.get(tuple(home[r]), 0) + 1
        return [min(link[r], self.socket_gbps() / crossing[tuple(home[r])]) if remote[r]
                else link[r] for r in range(len(self.gpus))]


def plan_of(ctx, path, host=None):
    case = {"xml": os.path.relpath(path, ctx.root)}
    if host:
        case["host"] = host
    row = ctx.run_cases("plan", [case], name=os.path.basename(path)[:-4] + "-plan")[0]
    expect(f"{os.path.basename(path)}: status of the plan", row["status"], "success")
    return row


def split(text):
    return text.split("|") if text else []


def membind_of(numactl):
    m = re.search(r"--membind=(\S+)", numactl)
    return sorted(parse_list(m.group(1))) if m else None


# --- checks -------------------------------------------------------------------------------

def register_plan_checks():
    for path in DATASETS:
        stem = os.path.basename(path)[:-4]

        def check(ctx, path=path, stem=stem):
            server, got = Server(path), plan_of(ctx, path)
            expect(f"{stem}: GPUs found", got["gpus"], len(server.gpus))
            gpu_sets, gpu_status = split(got["gpu_cpuset"]), split(got["gpu_status"])
            for i, g in enumerate(server.gpus):
                expect(f"{stem}: cpuset of GPU{i} ({g.get('pci_busid')}) [{gpu_status[i]}]",
                       gpu_sets[i] if gpu_status[i] == "success" else None,
                       list_str(server.local_cpus(g)))
            nic_sets, nic_status = split(got["nic_cpuset"]), split(got["nic_status"])
            for i, (nic, name) in enumerate(server.nics):
                expect(f"{stem}: cpuset of NIC {name} [{nic_status[i]}]",
                       nic_sets[i] if nic_status[i] == "success" else None,
                       list_str(server.local_cpus(nic)))
            rank_nic, rank_sets = split(got["rank_nic"]), split(got["rank_cpuset"])
            rank_status = split(got["rank_status"])
            for r, (nic, cpus) in enumerate(server.plan()):
                want_nic = server.nics[nic][1] if nic >= 0 else "-"
                expect(f"{stem}: NIC of rank {r} (GPU{r})", rank_nic[r], want_nic)
                expect(f"{stem}: cpuset of rank {r} [{rank_status[r]}]",
                       rank_sets[r] if rank_status[r] == "success" else None, list_str(cpus))
            ctx.metric("ranks", got["gpus"])

        lab.check(f"cpu.plan.{stem}", f"Cpusets and NICs: {stem}", points=10,
                  timeout=30)(check)


register_plan_checks()


@lab.check("cpu.options", "Binding options: numactl, taskset, Open MPI, Slurm", points=20,
           timeout=60)
def cpu_options(ctx):
    for path in DATASETS:
        stem = os.path.basename(path)[:-4]
        got = plan_of(ctx, path, host="node07")
        expect(f"{stem}: status of lab10_format_options ({got.get('options_error', '')})",
               got["options_status"], "success")
        for key, value in Server(path).options(host="node07").items():
            expect(f"{stem}: {key}", got[key], value)


@lab.check("cpu.h2d", "Your plan's host-to-device bandwidth (the handout's model)", points=10,
           kind="decision", timeout=60)
def cpu_h2d(ctx):
    for path in DATASETS:
        stem = os.path.basename(path)[:-4]
        server, got = Server(path), plan_of(ctx, path)
        numactl = split(got["numactl"])
        if len(numactl) != len(server.gpus) or any(membind_of(n) is None for n in numactl):
            raise CheckFailed(f"{stem}: no numactl --membind for every rank",
                              expected=f"{len(server.gpus)} options", found=got["numactl"][:200])
        mine = sum(server.h2d([membind_of(n) for n in numactl]))
        best = sum(float(g.get("pci_link_speed")) for g in server.gpus)
        unbound = sum(server.h2d([[0]] * len(server.gpus)))
        ctx.metric(f"{stem}_unbound_over_bound", unbound / best)
        ctx.log(f"{stem}: yours {mine:.1f} GB/s, all local {best:.1f}, unbound {unbound:.1f}")
        perf_ratio(ctx, student=lambda: mine, baseline=lambda: best, repeats=1, low=0.6,
                   high=0.95, unit="GB/s", name=f"{stem} host-to-device, 8 copies at once"
                   if len(server.gpus) == 8 else f"{stem} host-to-device")


@lab.check("cpu.bind", "The program really runs on the CPUs it claims", points=20, timeout=60)
def cpu_bind(ctx):
    allowed = sorted(os.sched_getaffinity(0))
    sets = [str(c) for c in allowed[:4]] + [f"{allowed[0]}-{allowed[-1]}" if
                                            len(allowed) > 1 else str(allowed[0])]
    sets += ["all", "0-23,48-71", "4000"]
    data = ctx.run_lab("bind", ["--sets", "|".join(sets)], backend="cpu")
    here = parse_list(data["allowed"])
    if not here or max(here) >= (os.cpu_count() or 1):
        raise CheckFailed("the harness found no usable CPUs", expected="CPUs of this machine",
                          found=data["allowed"])
    expect("rows (one per requested set)", len(data["rows"]), len(sets))
    for row in data["rows"]:
        asked = here if row["requested"] == data["allowed"] else parse_list(row["requested"])
        want = asked & here
        if not want:
            expect(f"status when binding to {row['requested']} (no such CPU here)",
                   row["status"], "invalid argument")
            continue
        expect(f"status of lab10_bind_here({row['requested']})", row["status"], "success")
        expect(f"the kernel's affinity of your program after binding to {row['requested']}",
               row["affinity"], list_str(want))
        ran = parse_list(row["ran_on"])
        if not ran <= want:
            raise CheckFailed(f"the program ran outside {list_str(want)}",
                              expected=f"CPUs in {list_str(want)}", found=row["ran_on"])


@lab.check("cpu.membw", "Bound vs unbound memory bandwidth (2 NUMA nodes)", points=20,
           timeout=120, kind="performance", needs={"numa_nodes": 2})
def cpu_membw(ctx):
    data = ctx.run_lab("membw", ["--repeats", "7"], backend="cpu")
    row = data["rows"][0]
    remote = sorted(row["remote_gbps"])[len(row["remote_gbps"]) // 2]
    local = sorted(row["local_gbps"])[len(row["local_gbps"]) // 2]
    ctx.metric("remote_gbps", remote)
    ctx.metric("local_over_remote", local / remote if remote else 0)
    perf_samples(ctx, student=row["student_gbps"], baseline=row["local_gbps"], low=0.8,
                 high=0.95, unit="GB/s", name="copy bandwidth on node-0 memory")


@lab.check("cpu.answers", "Answers: what binding is worth on p4d and on POWER8", points=10,
           kind="question", timeout=20)
def cpu_answers(ctx):
    ans, results = read_answers(ctx), []
    for key, stem in (("p4d_unbound_over_bound_percent", "aws-p4d.24xlarge"),
                      ("power8_unbound_over_bound_percent", "ibm-power8-4gpu")):
        server = Server(os.path.join(ROOT, "datasets", "hwloc", stem + ".xml"))
        want = 100 * sum(server.h2d([[0]] * len(server.gpus))) / sum(
            float(g.get("pci_link_speed")) for g in server.gpus)
        results.append(check_answer(ans, key, lambda v, w=want: abs(v - w) <= 2.0,
                                    f"{want:.1f} (within 2)", number=True))
    score_answers(ctx, results)


@lab.check("gpu.here", "This machine: GPU cpusets agree with nvidia-smi topo -m", points=10,
           backend="gpu", needs={"gpus": 1}, timeout=60)
def gpu_here(ctx):
    text = ctx.run(["nvidia-smi", "topo", "-m"]).stdout
    with open(ctx.out("topo.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    smi = ctx.run_cases("smi", [{"file": ctx.out("topo.txt")}], name="smi")[0]
    expect("nvidia-smi topo -m parsed", smi["status"], "success")
    got = ctx.run_cases("plan", [{"here": 1}], name="here-plan")[0]
    expect("status of the plan of this machine", got["status"], "success")
    expect("GPUs found by hwloc vs nvidia-smi", got["gpus"], smi["gpus"])
    for i, (mine, want) in enumerate(zip(split(got["gpu_cpuset"]), split(smi["cpu_affinity"]))):
        if want and want != "N/A":
            expect(f"cpuset of GPU{i} vs nvidia-smi's CPU Affinity", mine,
                   list_str(parse_list(want)))
