"""lab04: NCCL principles: ring channels that maximise the bus bandwidth, the double binary tree.

On every recorded node type (datasets/topologies) the driver builds the link
model of common/sim/sim_topo.h; the grader searches its own reference channels
on that model (below, an NCCL-style search written again from the handout), and
the driver simulates the student's channels and the reference's the same way.
Trees are checked for structure; the graph XML is parsed and checked for
NCCL's form (src/graph/search.cc, ncclTopoGetXmlFromGraphs).
"""

import os
import random
import xml.etree.ElementTree as ET

from gradelib import CheckFailed, Lab, expect, expect_close, perf_ratio

lab = Lab("lab04", title="NCCL 原理: ring 与 tree", program="lab04")

MAX_RINGS = 16

# Recorded topologies and NCCL's bandwidths for them (GB/s, NVIDIA/nccl src/graph/topo.h:
# SM70/SM80_NVLINK_BW 20, SM90_NVLINK_BW 20.6; PCIe width x speed / 80 = 12 / 24 / 48 for
# Gen3 / Gen4 / Gen5 x16; BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22, AMD_BW 16).
MACHINES = [
    # name, file, nvlink, pcie, sys, why
    ("dgx1-v100", "dgx1-v100.topo.txt", 20, 12, 6, "V100, Gen3, Broadwell Xeon E5 v4"),
    ("chapter1", "chapter1-hybrid-mesh.topo.txt", 20, 12, 6, "the DGX-1 class of chapter 1"),
    ("pcie-4090", "pcie-rtx4090-8x.topo.txt", 12, 24, 10,
     "no NVLink; Gen4; CPU model not given in the source: SKL_QPI_BW assumed"),
    ("hgx-a100", "hgx-a100.topo.txt", 20, 24, 16, "A100, Gen4, AMD EPYC 7543"),
    ("hgx-h200", "hgx-h200.topo.txt", 20.6, 48, 22, "H200 (SM90), Gen5, Sapphire Rapids assumed"),
    ("a100-xml", "hgx-a100-4nic.nccl.xml", 20, 24, 6, "A100, Intel model 106 (BDW_QPI_BW)"),
    ("h100-xml", "ibm-vpc-h100-vsi.nccl.xml", 20.6, 48, 22, "H100, Intel model 143 (SRP)"),
]

PATH_ORDER = ["LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS"]
GRAPH_ATTRS = ["id", "pattern", "crossnic", "nchannels", "speedintra", "speedinter",
               "latencyinter", "typeintra", "typeinter", "samechannels"]


def topo_args(m):
    _, fname, nv, pci, sys_, _ = m
    return ["--topo", os.path.join("datasets", "topologies", fname), "--nvlink-gbps", str(nv),
            "--pci-gbps", str(pci), "--sys-gbps", str(sys_)]


# --- the grader's own model computations -------------------------------------------

def ring_speed(machine, rings):
    """GB/s of each channel when the rings share the links: min over links of bw / uses."""
    g, cap, paths = machine["ngpus"], machine["link_gbps"], machine["paths"]
    load = {}
    for r in rings:
        for i in range(g):
            for link in paths[r[i]][r[(i + 1) % g]]:
                load[link] = load.get(link, 0) + 1
    return min(cap[link] / n for link, n in load.items()) if load else 0.0


def reference_rings(machine, max_rings=MAX_RINGS, budget=20000):
    """NCCL-style search: for each per-channel speed (a link's bandwidth / k), reserve the
    speed on every link of every route, find as many Hamiltonian rings as fit (depth first
    from GPU 0, most spare bandwidth first, backtracking across rings within a step
    budget), and keep the set with the highest channels x speed."""
    g, cap, paths = machine["ngpus"], machine["link_gbps"], machine["paths"]
    best = [list(range(g))]
    if g < 2:
        return best
    best_val = ring_speed(machine, best)
    speeds = sorted({round(c / k, 9) for c in set(cap) for k in range(1, max_rings + 1)},
                    reverse=True)
    for s in speeds:
        if s * max_rings <= best_val * (1 + 1e-9):
            continue
        rem, cur, found, steps = list(cap), [], [], [budget]

        def fits(a, b):
            return all(rem[link] >= s - 1e-9 for link in paths[a][b])

        def take(a, b, sign):
            for link in paths[a][b]:
                rem[link] -= sign * s

        def spare(a, b):
            return min(rem[link] for link in paths[a][b])

        def grow(ring, used):
            steps[0] -= 1
            if steps[0] < 0:
                return True
            v = ring[-1]
            if len(ring) == g:
                if not fits(v, ring[0]):
                    return False
                take(v, ring[0], 1)
                cur.append(list(ring))
                if len(cur) > len(found):
                    found[:] = [list(r) for r in cur]
                done = len(cur) == max_rings or grow([0], {0})
                cur.pop()
                take(v, ring[0], -1)
                return done
            cands = sorted((w for w in range(g) if w not in used and fits(v, w)),
                           key=lambda w: -spare(v, w))
            for w in cands:
                take(v, w, 1)
                ring.append(w)
                used.add(w)
                done = grow(ring, used)
                used.discard(w)
                ring.pop()
                take(v, w, -1)
                if done:
                    return True
            return False

        grow([0], {0})
        if found:
            val = len(found) * ring_speed(machine, found)
            if val > best_val * (1 + 1e-9):
                best, best_val = found, val
    return best


def is_ring(ring, g):
    return sorted(ring) == list(range(g))


def check_tree(name, tree, n):
    """Each rank one parent except the root, children consistent with parents, binary,
    every rank reachable from the root (no cycle). Returns (root, interior ranks)."""
    up, d0, d1 = tree["up"], tree["down0"], tree["down1"]
    for key in ("up", "down0", "down1"):
        if len(tree[key]) != n or any(not -1 <= x < n for x in tree[key]):
            raise CheckFailed(f"{name}: {key} must list {n} ranks in -1..{n - 1}",
                              found=str(tree[key]))
    roots = [r for r in range(n) if up[r] == -1]
    if len(roots) != 1:
        raise CheckFailed(f"{name}: exactly one root expected", expected="1 rank with up = -1",
                          found=f"roots {roots}")
    for r in range(n):
        kids = sorted(c for c in (d0[r], d1[r]) if c != -1)
        want = sorted(c for c in range(n) if up[c] == r)
        if kids != want or (d0[r] != -1 and d0[r] == d1[r]):
            raise CheckFailed(f"{name}: children of rank {r} disagree with the parents",
                              expected=f"down = the ranks whose up is {r}: {want}",
                              found=f"down0 {d0[r]}, down1 {d1[r]}")
    seen, todo = {roots[0]}, [roots[0]]
    while todo:
        r = todo.pop()
        for c in (d0[r], d1[r]):
            if c != -1 and c not in seen:
                seen.add(c)
                todo.append(c)
    if len(seen) != n:
        raise CheckFailed(f"{name}: not every rank hangs below the root (a cycle?)",
                          expected=f"{n} ranks reachable", found=f"{len(seen)}")
    return roots[0], {r for r in range(n) if d0[r] != -1 or d1[r] != -1}


def check_double_tree(what, res, n):
    expect(f"{what}: status", res.get("tree_status", res.get("status")), "success")
    r0, in0 = check_tree(f"{what} tree 0", res["tree0"], n)
    r1, in1 = check_tree(f"{what} tree 1", res["tree1"], n)
    both = sorted((in0 & in1) - {r0, r1})
    if both:
        raise CheckFailed(f"{what}: the two trees are not complementary",
                          expected="every rank that is not a root has children in at most "
                                   "one tree (a leaf in the other)",
                          found=f"ranks {both} are interior in both trees")
    if n > 1 and r0 == r1:
        raise CheckFailed(f"{what}: both trees have the same root", found=f"root {r0}")


# --- checks ----------------------------------------------------------------------------

@lab.check("sim.machines", "Link models of the recorded topologies", points=0, backend="sim",
           timeout=120)
def sim_machines(ctx):
    out = {}
    for m in MACHINES:
        ctx.run([ctx.program, "machine", *topo_args(m), "--json", ctx.out(m[0] + ".json")])
        machine = ctx.load_json(m[0] + ".json")
        ref = reference_rings(machine)
        ctx.log(f"{m[0]}: reference {len(ref)} rings x {ring_speed(machine, ref):.4g} GB/s")
        out[m[0]] = (machine, ref)
    return out


@lab.check("sim.bottleneck", "Bottleneck bandwidth of one ring", points=10, backend="sim",
           parent="sim.machines", timeout=30)
def sim_bottleneck(ctx, machines):
    rng = random.Random()
    for m in MACHINES:
        machine, ref = machines[m[0]]
        g = machine["ngpus"]
        perm = list(range(g))
        rng.shuffle(perm)
        rings = [list(range(g)), list(range(g))[::-1], perm, ref[0],
                 [i // 2 + (g // 2) * (i % 2) for i in range(g)]]  # interleaved halves
        args = [a for r in rings for a in ("--ring", ",".join(map(str, r)))]
        bad = list(range(g))
        bad[-1] = bad[0]  # a GPU twice
        args += ["--ring", ",".join(map(str, bad))]
        ctx.run([ctx.program, "bottleneck", *topo_args(m), *args,
                 "--json", ctx.out(m[0] + ".json")])
        got = ctx.load_json(m[0] + ".json")
        for r, row in zip(rings, got):
            expect(f"{m[0]} ring {row['ring']}: status", row["status"], "success")
            expect_close(f"{m[0]} ring {row['ring']}: GB/s", row["gbps"],
                         ring_speed(machine, [r]), rel=1e-6)
        expect(f"{m[0]} ring {got[-1]['ring']} (GPU {bad[0]} twice): status",
               got[-1]["status"], "invalid argument")


@lab.check("sim.search", "Ring search runs on every recorded topology", points=0,
           backend="sim", parent="sim.machines", timeout=120)
def sim_search(ctx, machines):
    out = {}
    for m in MACHINES:
        _, ref = machines[m[0]]
        refarg = ";".join(",".join(map(str, r)) for r in ref)
        ctx.run([ctx.program, "search", *topo_args(m), "--max-rings", str(MAX_RINGS),
                 "--ref", refarg, "--xml", ctx.out(m[0] + ".xml"),
                 "--json", ctx.out(m[0] + ".json")])
        out[m[0]] = ctx.load_json(m[0] + ".json")
        out[m[0]]["xml_path"] = ctx.out(m[0] + ".xml")
    return machines, out


@lab.check("sim.rings", "Rings are Hamiltonian", points=20, backend="sim", parent="sim.search")
def sim_rings(ctx, data):
    _, runs = data
    for m in MACHINES:
        res = runs[m[0]]
        expect(f"{m[0]}: status of lab04_search_rings", res["status"], "success")
        g = res["ngpus"]
        if not 1 <= res["nrings"] <= MAX_RINGS:
            raise CheckFailed(f"{m[0]}: number of rings", expected=f"1..{MAX_RINGS}",
                              found=str(res["nrings"]))
        for i, ring in enumerate(res["rings"]):
            if not is_ring(ring, g):
                raise CheckFailed(f"{m[0]}: channel {i} is not a Hamiltonian ring",
                                  expected=f"every GPU 0..{g - 1} exactly once", found=str(ring))
        ctx.metric(f"{m[0]}_rings", res["nrings"])


@lab.check("sim.trees", "Double binary trees are valid and complementary", points=15,
           backend="sim", parent="sim.search", timeout=60)
def sim_trees(ctx, data):
    _, runs = data
    rng = random.Random()
    for n in list(range(1, 17)) + [24, 31, 64]:
        order = list(range(n))
        rng.shuffle(order)
        for name, extra in (("in order", []), ("shuffled", ["--order", ",".join(map(str, order))])):
            ctx.run([ctx.program, "trees", str(n), *extra, "--json", ctx.out("trees.json")])
            check_double_tree(f"{n} ranks {name}", ctx.load_json("trees.json"), n)
    for m in MACHINES:
        res = runs[m[0]]
        if not res["valid"]:
            raise CheckFailed(f"{m[0]}: no valid rings to build trees on", found=res["status"])
        check_double_tree(f"{m[0]} (first ring's order)", res, res["ngpus"])


def check_xml(name, res, machine):
    try:
        root = ET.parse(res["xml_path"]).getroot()
    except (ET.ParseError, OSError) as e:
        raise CheckFailed(f"{name}: the graph file is not well-formed XML",
                          expected="<graphs version=\"1\">...</graphs>", found=str(e))
    expect(f"{name}: root element", root.tag, "graphs")
    expect(f"{name}: <graphs version>", root.get("version"), "1")
    graphs = {}
    for gr in root.findall("graph"):
        missing = [a for a in GRAPH_ATTRS if gr.get(a) is None]
        if missing:
            raise CheckFailed(f"{name}: <graph> lacks attributes NCCL reads",
                              expected=" ".join(GRAPH_ATTRS), found="missing " + " ".join(missing))
        try:
            ints = {a: int(gr.get(a)) for a in ("id", "pattern", "crossnic", "nchannels",
                                                 "samechannels")}
            floats = {a: float(gr.get(a)) for a in ("speedintra", "speedinter", "latencyinter")}
        except ValueError as e:
            raise CheckFailed(f"{name}: a numeric attribute is not a number", found=str(e))
        graphs[ints["id"]] = (gr, ints, floats)
    g = res["ngpus"]
    for gid, patterns in ((0, {4}), (1, {1, 2, 3})):
        if gid not in graphs:
            raise CheckFailed(f"{name}: no <graph id=\"{gid}\">",
                              expected="graph 0 (ring) and graph 1 (tree)", found=str(list(graphs)))
        gr, ints, floats = graphs[gid]
        if ints["pattern"] not in patterns:
            raise CheckFailed(f"{name}: graph {gid} pattern", expected=str(sorted(patterns)),
                              found=str(ints["pattern"]))
        chans = gr.findall("channel")
        expect(f"{name}: graph {gid} nchannels = number of <channel>", ints["nchannels"],
               len(chans))
        orders = []
        for c in chans:
            try:
                orders.append([int(x.get("dev")) for x in c.findall("gpu")])
            except (TypeError, ValueError):
                raise CheckFailed(f"{name}: <gpu> without an integer dev attribute")
        for i, o in enumerate(orders):
            if not is_ring(o, g):
                raise CheckFailed(f"{name}: graph {gid} channel {i} must list every GPU once",
                                  found=str(o))
        if gid == 0:
            expect(f"{name}: ring channels in the file = your rings", orders, res["rings"])
            speed = ring_speed(machine, res["rings"])
            expect_close(f"{name}: speedintra (GB/s per channel)", floats["speedintra"], speed,
                         rel=0.01)
            worst = max((machine["codes"][r[i]][r[(i + 1) % g]] for r in res["rings"]
                         for i in range(g)), key=PATH_ORDER.index) if g > 1 else "LOC"
            expect(f"{name}: typeintra (slowest path type used)", gr.get("typeintra"), worst)
            if gr.get("typeinter") not in PATH_ORDER + ["NET"]:
                raise CheckFailed(f"{name}: typeinter is not an NCCL path type",
                                  found=gr.get("typeinter"))


@lab.check("sim.xml", "Channels exported as NCCL graph XML", points=15, backend="sim",
           parent="sim.search")
def sim_xml(ctx, data):
    machines, runs = data
    for m in MACHINES:
        res = runs[m[0]]
        expect(f"{m[0]}: status of lab04_write_graph_xml", res["xml_status"], "success")
        check_xml(m[0], res, machines[m[0]][0])


@lab.check("sim.perf", "Simulated bus bandwidth >= 95% of the reference search", points=30,
           backend="sim", kind="performance", parent="sim.search")
def sim_perf(ctx, data):
    _, runs = data
    mine, ref = [], []
    for i, m in enumerate(MACHINES):
        res = runs[m[0]]
        value = res["busbw"] if res["busbw"] and res["busbw"] > 0 else 1e-9
        perf_ratio(ctx, student=lambda: value, baseline=lambda: res["ref_busbw"], repeats=1,
                   low=0.80, high=0.95, unit="GB/s", name=f"{m[0]} busbw")
        mine.append((i + 1, value))
        ref.append((i + 1, res["ref_busbw"]))
    ctx.plot("lab04-busbw", {"your channels": mine, "reference search": ref},
             xlabel="machine (" + ", ".join(f"{i + 1} {m[0]}" for i, m in enumerate(MACHINES))
             + ")", ylabel="simulated AllReduce busbw (GB/s)", logx=False,
             title="lab04: ring channels on the recorded topologies")


@lab.check("gpu.graph", "NCCL with your graph file vs NCCL's own search", points=10,
           backend="gpu", kind="performance", needs={"gpus": 2}, timeout=300)
def gpu_graph(ctx):
    smi = ctx.run(["nvidia-smi", "topo", "-m"])
    with open(ctx.out("topo.txt"), "w", encoding="utf-8") as f:
        f.write(smi.stdout)
    ctx.run([ctx.program, "search", "--topo", ctx.out("topo.txt"), "--xml", ctx.out("graph.xml"),
             "--json", ctx.out("search.json")])
    res = ctx.load_json("search.json")
    expect("rings on this machine", res["valid"], True)
    gpus = res["ngpus"]

    def run(graph):
        def measure():
            env = {"NCCL_GRAPH_FILE": ctx.out("graph.xml")} if graph else {}
            ctx.mpirun(["bench", "--backend", "gpu", "--json", ctx.out("bench.json")],
                       ranks=gpus, env=env)
            return ctx.load_json("bench.json")["busbw_median"]
        return measure
    perf_ratio(ctx, student=run(True), baseline=run(False), repeats=3, low=0.8, high=0.9,
               name="NCCL AllReduce busbw (256 MiB)")
