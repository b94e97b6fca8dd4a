"""lab10: CPU/NUMA affinity with hwloc.

On every recorded hwloc topology in datasets/hwloc the grader finds the GPUs,
the RDMA NICs, their local cpusets, each rank's NIC and cpuset and every
binding option again, from the XML with its own code, and compares. The
binding check looks at where a thread really runs after the student's call.
The bandwidth check needs two NUMA nodes and says so where there is one.
"""

import glob
import json
import os
import xml.etree.ElementTree as ET

from gradelib import CheckFailed, Lab, expect, perf_ratio

lab = Lab("lab10", title="CPU/NUMA 亲和性绑定", program="lab10")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATASETS = sorted(glob.glob(os.path.join(ROOT, "datasets", "hwloc", "*.xml")))
IO_TYPES = {"Bridge", "PCIDev", "OSDev", "Misc"}


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

    def options(self, host="localhost"):
        sets = [cpus for _, cpus in self.plan()]
        nodes = [sorted(n for n, c in self.numa.items() if c & s) for s in sets]
        maps = []
        for r, s in enumerate(sets):
            k = sum(1 for q in range(r) if sets[q] == s)
            maps.append(sorted(s)[k % len(s)])
        return {
            "cpulist": [list_str(s) for s in sets],
            "taskset": [f"taskset -c {list_str(s)}" for s in sets],
            "numactl": [f"numactl --physcpubind={list_str(s)} --membind={list_str(n)}"
                        for s, n in zip(sets, nodes)],
            "slurm_mask": "--cpu-bind=mask_cpu:" + ",".join(mask_str(s) for s in sets),
            "slurm_map": "--cpu-bind=map_cpu:" + ",".join(str(c) for c in maps),
            "ompi_cpuset": "--cpu-set " + list_str(set().union(*sets)),
            "rankfile": "".join(f"rank {r}={host} slot={list_str(s)}\n"
                                for r, s in enumerate(sets)),
        }


def run_plan(ctx, path, tag):
    rel = os.path.relpath(path, ctx.root)
    ctx.run([ctx.program, "plan", rel, "--json", ctx.out(tag + ".json")])
    return ctx.load_json(tag + ".json")


# --- checks -------------------------------------------------------------------------------

def register_plan_checks():
    for path in DATASETS:
        stem = os.path.basename(path)[:-4]

        def check(ctx, path=path, stem=stem):
            server, got = Server(path), run_plan(ctx, path, stem)
            expect(f"{stem}: GPUs found", len(got["gpus"]), len(server.gpus))
            for i, (g, mine) in enumerate(zip(server.gpus, got["gpus"])):
                expect(f"{stem}: cpuset of GPU{i} ({g.get('pci_busid')}) [{mine['status']}]",
                       mine["cpuset"], list_str(server.local_cpus(g)))
            for (nic, name), mine in zip(server.nics, got["nics"]):
                expect(f"{stem}: cpuset of NIC {name} [{mine['status']}]", mine["cpuset"],
                       list_str(server.local_cpus(nic)))
            for r, ((nic, cpus), mine) in enumerate(zip(server.plan(), got["ranks"])):
                want_nic = server.nics[nic][1] if nic >= 0 else None
                expect(f"{stem}: NIC of rank {r} (GPU{r})", mine["nic_name"], want_nic)
                expect(f"{stem}: cpuset of rank {r} [{mine['status']}]", mine["cpuset"],
                       list_str(cpus))
            ctx.metric("ranks", len(got["ranks"]))

        lab.check(f"cpu.plan.{stem}", f"Cpusets and NICs: {stem}", points=10,
                  timeout=30)(check)


register_plan_checks()


@lab.check("cpu.options", "Binding options: numactl, taskset, Open MPI, Slurm", points=20,
           timeout=60)
def cpu_options(ctx):
    for path in DATASETS:
        stem = os.path.basename(path)[:-4]
        got = run_plan(ctx, path, stem)
        expect(f"{stem}: status of lab10_format_options", got["options_status"], "success")
        want = Server(path).options()
        for key, value in want.items():
            expect(f"{stem}: {key}", got["options"][key], value)


@lab.check("cpu.bind", "The thread really runs on the CPUs it claims", points=20, timeout=60)
def cpu_bind(ctx):
    ctx.run([ctx.program, "bind", "--json", ctx.out("bind.json")])
    got = ctx.load_json("bind.json")
    # The harness (not your code) read the CPUs this process may use from hwloc; they
    # must exist on this machine.
    allowed = set(parse_list(got["allowed"]))
    if not allowed or max(allowed) >= (os.cpu_count() or 1):
        raise CheckFailed("the harness found no usable CPUs", expected="CPUs of this machine",
                          found=got["allowed"])
    for case in got["cases"]:
        asked = set(parse_list(case["requested"]))
        here = asked & allowed
        if not here:
            expect(f"status when binding to {case['requested']} (no such CPU here)",
                   case["status"], "invalid argument")
            continue
        expect(f"status of lab10_bind_here({case['requested']})", case["status"], "success")
        expect(f"sched_getaffinity after binding to {case['requested']}", case["affinity"],
               list_str(here))
        expect(f"hwloc_get_cpubind after binding to {case['requested']}", case["hwloc_cpubind"],
               list_str(here))
        ran = set(parse_list(case["ran_on"]))
        if not ran <= here:
            raise CheckFailed(f"the thread ran outside {list_str(here)}",
                              expected=f"sched_getcpu() in {list_str(here)}",
                              found=f"ran on {case['ran_on']}")


def parse_list(text):
    out = []
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


@lab.check("cpu.membw", "Bound vs unbound memory bandwidth (2 NUMA nodes)", points=20,
           timeout=120, kind="performance", needs={"numa_nodes": 2})
def cpu_membw(ctx):
    ctx.run([ctx.program, "membw", "--repeats", "7", "--json", ctx.out("membw.json")])
    got = ctx.load_json("membw.json")
    expect("status of lab10_bind_here", got["student_status"], "success")
    remote = sorted(got["remote_gbps"])[len(got["remote_gbps"]) // 2]
    local = sorted(got["local_gbps"])[len(got["local_gbps"]) // 2]
    ctx.metric("remote_gbps", remote)
    ctx.metric("local_over_remote", local / remote if remote else 0)
    mine, base = iter(got["student_gbps"]), iter(got["local_gbps"])
    perf_ratio(ctx, student=lambda: next(mine), baseline=lambda: next(base),
               repeats=len(got["student_gbps"]), low=0.8, high=0.95, unit="GB/s",
               name="bandwidth on node 0 memory")


@lab.check("gpu.here", "This machine: GPU cpusets agree with nvidia-smi topo -m", points=10,
           backend="gpu", needs={"gpus": 1}, timeout=60)
def gpu_here(ctx):
    smi = ctx.run(["nvidia-smi", "topo", "-m"])
    with open(ctx.out("smi.txt"), "w", encoding="utf-8") as f:
        f.write(smi.stdout)
    res = ctx.run([os.path.join(ctx.root, "commlab"), "topo", ctx.out("smi.txt"), "--json"])
    topo = json.loads(res.stdout)
    ctx.run([ctx.program, "plan", "--here", "--json", ctx.out("here.json")])
    got = ctx.load_json("here.json")
    gpus = [d for d in topo["devices"] if d.startswith("GPU")]
    expect("GPUs found by hwloc vs nvidia-smi", len(got["gpus"]), len(gpus))
    for i, name in enumerate(gpus):
        want = topo["cpu_affinity"].get(name)
        if want:
            expect(f"cpuset of {name}", got["gpus"][i]["cpuset"], list_str(parse_list(want)))
