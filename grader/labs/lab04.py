"""lab04: NCCL principles: ring channels that maximise the bus bandwidth, the double binary tree.

Every recorded node type of datasets/topologies (and relabelled copies of the text matrices,
drawn afresh every run) is modelled by the shared model of
common/sim (sim_topo.h: links and routes with NCCL's bandwidths; sim_channels.h: NCCL's
ring search with its speed table and per-channel cap, channels simulated at once). The
harness puts beside the student's channels NCCL's own search and the index ring on the
same machine; performance is scored only where the index ring loses. The graph file is
parsed as NCCL parses it (src/graph/search.cc, ncclTopoGetGraphFromXml) and compared with
what NCCL would have written for the same rings.
"""

import csv
import os
import random
import xml.etree.ElementTree as ET

from gradelib import CheckFailed, Lab, expect, expect_close, perf_samples
from gradelib.topologies import random_perms, relabelled_text

lab = Lab("lab04", title="NCCL 原理: ring 与 tree", program="lab04")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOPO_DIR = os.path.join("datasets", "topologies")
MAX_RINGS = 16
TRIVIAL = 0.95   # the index ring within 5% of NCCL's search: nothing to find there
COPIES = 2       # relabelled copies of each text matrix, drawn afresh every run
PATH_ORDER = ["LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS"]
GRAPH_ATTRS = ["id", "pattern", "crossnic", "nchannels", "speedintra", "speedinter",
               "latencyinter", "typeintra", "typeinter", "samechannels"]


def machines():
    """(name, case keys) for every node type of datasets/topologies/node-types.csv."""
    with open(os.path.join(ROOT, TOPO_DIR, "node-types.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [(r["topology"].split(".")[0],
             {"topo": os.path.join(TOPO_DIR, r["topology"]), "nvlink": r["nvlink_gbps"],
              "pci": r["pcie_gbps"], "sys": r["sys_gbps"], "sm": r["sm"]}) for r in rows]


def ring_text(rings):
    return ";".join(",".join(map(str, r)) for r in rings)


def parse_rings(text, g):
    values = [int(x) for part in text.split(";") if part for x in part.split(",")]
    return [values[i:i + g] for i in range(0, len(values), g)]


# --- checks ----------------------------------------------------------------------------

@lab.check("sim.search", "Your ring search runs on every recorded node type", points=0,
           backend="sim", timeout=60)
def sim_search(ctx):
    """Every recorded machine, then each text matrix again with its GPUs numbered in another
    order (the same machine: a fixed answer per file does not carry over)."""
    ms = machines()
    rows = ctx.run_cases("search", [dict(keys, max_rings=MAX_RINGS,
                                         topo_json=ctx.out(f"{name}.json"))
                                    for name, keys in ms], name="search-recorded")
    copies = []
    for name, keys in ms:
        if keys["topo"].endswith(".topo.txt"):
            node = ctx.load_json(f"{name}.json")
            for perm in random_perms(8, COPIES):
                path = ctx.out(f"{name}.{''.join(map(str, perm))}.topo.txt")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(relabelled_text(node, perm))
                copies.append((f"{name} relabelled {''.join(map(str, perm))}", name,
                               dict(keys, topo=os.path.relpath(path, ROOT))))
    rows += ctx.run_cases("search", [dict(keys, max_rings=MAX_RINGS) for _, _, keys in copies],
                          name="search-relabelled")
    out = {}
    for (name, base, keys), row in zip([(n, n, k) for n, k in ms] + copies, rows):
        row.update(keys=keys, base=base, ring_list=parse_rings(row.get("rings", ""), row["ngpus"]))
        out[name] = row
        ctx.log(f"{name}: yours {row['nrings']} ring(s) {row['busbw']} GB/s; NCCL's search "
                f"{row['ref_nrings']} x {row['ref_speed']} GB/s = {row['ref_busbw']} GB/s; "
                f"index ring {row['naive_busbw']} GB/s")
    return out


@lab.check("sim.rings", "Rings are Hamiltonian", points=0, backend="sim", parent="sim.search")
def sim_rings(ctx, runs):
    for name, res in runs.items():
        expect(f"{name}: status of lab04_search_rings", res["status"], "success")
        if not 1 <= res["nrings"] <= MAX_RINGS:
            raise CheckFailed(f"{name}: number of rings", expected=f"1..{MAX_RINGS}",
                              found=str(res["nrings"]))
        if res["invalid"]:
            raise CheckFailed(f"{name}: {res['invalid']}",
                              expected=f"every GPU 0..{res['ngpus'] - 1} exactly once per ring",
                              found=res["rings"])
        ctx.metric(f"{name}_rings", res["nrings"])
    return runs


@lab.check("sim.bottleneck", "Bottleneck bandwidth of one ring", points=10, backend="sim",
           parent="sim.search", timeout=30)
def sim_bottleneck(ctx, runs):
    rng = random.Random()
    cases, bad = [], []
    for name, res in runs.items():
        if name != res["base"]:
            continue
        g = res["ngpus"]
        perm = list(range(g))
        rng.shuffle(perm)
        ref_first = list(range(g))  # the index order stands in when the search failed
        if res["ring_list"] and not res["invalid"]:
            ref_first = res["ring_list"][0]
        rings = [list(range(g)), list(range(g))[::-1], perm, ref_first,
                 [i // 2 + (g // 2) * (i % 2) for i in range(g)]]  # interleaved halves
        cases += [dict(res["keys"], ring=",".join(map(str, r))) for r in rings]
        twice = list(range(g))
        twice[-1] = twice[0]  # a GPU twice
        bad.append(dict(res["keys"], ring=",".join(map(str, twice))))
    rows = ctx.run_cases("bottleneck", cases + bad)
    for case, row in zip(cases, rows):
        where = f"{os.path.basename(case['topo'])} ring {row['ring']}"
        expect(f"{where}: status", row["status"], "success")
        expect_close(f"{where}: GB/s", row["gbps"], row["harness_gbps"], rel=1e-6)
    for case, row in zip(bad, rows[len(cases):]):
        expect(f"{os.path.basename(case['topo'])} ring {row['ring']} (GPU {case['ring'][0]} "
               f"twice): status", row["status"], "invalid argument")


def check_tree(name, up, d0, d1, n):
    """Each rank one parent except the root, children consistent with parents, binary,
    every rank reachable from the root (no cycle). Returns (root, interior ranks)."""
    for key, v in (("up", up), ("down0", d0), ("down1", d1)):
        if len(v) != n or any(not -1 <= x < n for x in v):
            raise CheckFailed(f"{name}: {key} must list {n} ranks in -1..{n - 1}", found=str(v))
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


def ints(text):
    return [int(x) for x in text.split(",")] if text else []


@lab.check("sim.trees", "Double binary trees are valid and complementary", points=15,
           backend="sim", timeout=60)
def sim_trees(ctx):
    rng = random.Random()
    cases = []
    for n in list(range(1, 17)) + [24, 31, 64]:
        order = list(range(n))
        rng.shuffle(order)
        cases += [{"n": n}, {"n": n, "order": ",".join(map(str, order))}]
    rows = ctx.run_cases("trees", cases + [{"n": 4, "order": "0,1,1,3"}])
    for case, row in zip(cases, rows):
        n = case["n"]
        what = f"{n} ranks " + ("in order" if "order" not in case else f"order {case['order']}")
        expect(f"{what}: status", row["status"], "success")
        r0, in0 = check_tree(f"{what}, tree 0", ints(row["tree0_up"]), ints(row["tree0_down0"]),
                             ints(row["tree0_down1"]), n)
        r1, in1 = check_tree(f"{what}, tree 1", ints(row["tree1_up"]), ints(row["tree1_down0"]),
                             ints(row["tree1_down1"]), n)
        both = sorted((in0 & in1) - {r0, r1})
        if both:
            raise CheckFailed(f"{what}: the two trees are not complementary",
                              expected="every rank that is not a root has children in at most "
                                       "one tree (a leaf in the other)",
                              found=f"ranks {both} are interior in both trees")
        if n > 1 and r0 == r1:
            raise CheckFailed(f"{what}: both trees have the same root", found=f"root {r0}")
    expect("order 0,1,1,3 (not a permutation): status", rows[-1]["status"], "invalid argument")


def check_xml(name, path, rings, want):
    """The file as NCCL reads it, against what NCCL would have written for these rings."""
    try:
        root = ET.parse(path).getroot()
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
            ints_ = {a: int(gr.get(a)) for a in ("id", "pattern", "crossnic", "nchannels",
                                                 "samechannels")}
            floats = {a: float(gr.get(a)) for a in ("speedintra", "speedinter", "latencyinter")}
        except ValueError as e:
            raise CheckFailed(f"{name}: a numeric attribute is not a number", found=str(e))
        graphs[ints_["id"]] = (gr, ints_, floats)
    g = len(rings[0])
    # NCCL copies the channels when it duplicates them: channel c + n is channel c.
    channels = [rings[c % len(rings)] for c in range(want["nchannels"])]
    for gid, patterns in ((0, {4}), (1, {1, 2, 3})):
        if gid not in graphs:
            raise CheckFailed(f"{name}: no <graph id=\"{gid}\">",
                              expected="graph 0 (ring) and graph 1 (tree)", found=str(list(graphs)))
        gr, ints_, floats = graphs[gid]
        if ints_["pattern"] not in patterns:
            raise CheckFailed(f"{name}: graph {gid} pattern", expected=str(sorted(patterns)),
                              found=str(ints_["pattern"]))
        chans = gr.findall("channel")
        expect(f"{name}: graph {gid} nchannels = number of <channel>", ints_["nchannels"],
               len(chans))
        expect(f"{name}: graph {gid} channels after NCCL's duplication", ints_["nchannels"],
               want["nchannels"])
        orders = []
        for c in chans:
            try:  # NCCL reads dev with strtol(..., 16)
                orders.append([int(x.get("dev"), 16) for x in c.findall("gpu")])
            except (TypeError, ValueError):
                raise CheckFailed(f"{name}: <gpu> without a dev attribute NCCL can read",
                                  expected="dev=\"0x3\" (hexadecimal)")
        for i, o in enumerate(orders):
            if sorted(o) != list(range(g)):
                raise CheckFailed(f"{name}: graph {gid} channel {i} must list every GPU once",
                                  found=str(o))
        expect(f"{name}: graph {gid} channels (your rings, in order, duplicated)", orders,
               channels)
        expect_close(f"{name}: graph {gid} speedintra (GB/s per channel)", floats["speedintra"],
                     want["speed"], rel=0.01)
        expect(f"{name}: graph {gid} typeintra (slowest path type used)", gr.get("typeintra"),
               want["typeintra"])
        if gr.get("typeinter") not in PATH_ORDER + ["PXN", "NET"]:
            raise CheckFailed(f"{name}: typeinter is not an NCCL path type",
                              found=gr.get("typeinter"))


@lab.check("sim.xml", "Channels exported as NCCL graph XML", points=15, backend="sim",
           parent="sim.search")
def sim_xml(ctx, runs):
    # NCCL's own rings of every machine (your search does not matter here), and on the
    # DGX-1 the index ring, whose route 3 -> 4 goes through a third GPU (NVB).
    cases = []
    for name, res in runs.items():
        if name != res["base"]:
            continue
        cases.append((name, res["ngpus"], dict(res["keys"], rings=res["ref_rings"],
                                               xml=ctx.out(name + ".xml"))))
    dgx = runs["dgx1-v100"]
    cases.append(("dgx1-v100 index ring", 8, dict(dgx["keys"], rings="0,1,2,3,4,5,6,7",
                                                  xml=ctx.out("dgx1-index.xml"))))
    rows = ctx.run_cases("xml", [c for _, _, c in cases])
    for (name, g, case), row in zip(cases, rows):
        expect(f"{name}: status of lab04_write_graph_xml", row["status"], "success")
        check_xml(name, case["xml"], parse_rings(case["rings"], g), row)


@lab.check("sim.perf", "Simulated bus bandwidth >= 95% of NCCL's search", points=60,
           backend="sim", kind="performance", parent="sim.rings")
def sim_perf(ctx, runs):
    """One score per kind of machine where the index ring loses: each NVLink mesh with its
    relabelled copies, and the NVSwitch machines together (one lesson: many channels). The
    ratio of a kind is the median over its machines: NCCL's search, the reference, is itself
    a budgeted search whose result moves a little with the GPUs' numbering."""
    kinds, lose = {}, set()
    for name, res in runs.items():
        kind = "NVSwitch machines" if res["nvswitch"] else res["base"]
        kinds.setdefault(kind, []).append((name, res))
        if res["naive_busbw"] < TRIVIAL * res["ref_busbw"]:
            lose.add(kind)
    for kind, members in sorted(kinds.items()):
        if kind not in lose:
            ctx.log(f"{kind}: not scored (the index ring is within 5% of NCCL's search)")
            continue
        # Simulated time is deterministic: one sample of each machine is exact.
        perf_samples(ctx, student=[max(r["busbw"], 1e-9) for _, r in members],
                     baseline=[r["ref_busbw"] for _, r in members], low=0.80, high=0.95,
                     unit="GB/s", name=f"{kind} ({len(members)} machine(s)) busbw")
    ctx.metric("kinds_scored", len(lose))
    recorded = [(n, r) for n, r in runs.items() if n == r["base"]]
    ctx.plot("lab04-busbw", {label: [(i + 1, r[key]) for i, (_, r) in enumerate(recorded)]
                             for label, key in (("your channels", "busbw"),
                                                ("NCCL's search", "ref_busbw"),
                                                ("index ring", "naive_busbw"))},
             xlabel="machine (" + ", ".join(f"{i + 1} {n}" for i, (n, _) in enumerate(recorded))
             + ")", ylabel="simulated AllReduce busbw (GB/s)", logx=False,
             title="lab04: ring channels on the recorded topologies")


# --- gpu --------------------------------------------------------------------------------

# NCCL's per-link NVLink bandwidth by compute capability (src/graph/topo.h).
NVLINK_GBPS = {70: 20, 80: 20, 86: 12, 89: 12, 90: 20.6, 100: 40.1}


@lab.check("gpu.graph", "NCCL with your graph file vs NCCL's own search", points=10,
           backend="gpu", kind="performance", needs={"gpus": 2}, timeout=300)
def gpu_graph(ctx):
    smi = ctx.run(["nvidia-smi", "topo", "-m"])
    with open(ctx.out("topo.txt"), "w", encoding="utf-8") as f:
        f.write(smi.stdout)
    cap = ctx.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"])
    sm = int(round(float(cap.stdout.split()[0]) * 10))
    # Gen4 PCIe and a Skylake-class socket link: only the NVLink figures matter on
    # the multi-GPU machines this check runs on.
    keys = {"topo": ctx.out("topo.txt"), "nvlink": NVLINK_GBPS.get(sm, 20), "pci": 24,
            "sys": 10, "sm": sm}
    res = ctx.run_cases("search", [dict(keys, max_rings=MAX_RINGS)])[0]
    expect("status of lab04_search_rings on this machine", res["status"], "success")
    expect("rings on this machine", res["invalid"], "")
    row = ctx.run_cases("xml", [dict(keys, rings=res["rings"], xml=ctx.out("graph.xml"))])[0]
    expect("status of lab04_write_graph_xml on this machine", row["status"], "success")
    gpus = res["ngpus"]
    mine, base = [], []
    for _ in range(3):  # interleaved: NCCL's own search, then your file
        for env, out in (({}, base), ({"NCCL_GRAPH_FILE": ctx.out("graph.xml")}, mine)):
            data = ctx.run_lab("bench", ["--bytes", "256M", "--repeats", "1", "--iters", "10"],
                               ranks=gpus, backend="gpu", env=env)
            r = data["rows"][0]
            expect("AllReduce elements NCCL got wrong", r["wrong"], 0)
            out.append(r["busbw"][0])
    perf_samples(ctx, student=mine, baseline=base, low=0.8, high=0.9,
                 name="NCCL AllReduce busbw (256 MiB)")
