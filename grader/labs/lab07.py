"""lab07: topology optimisation inside an 8-GPU server (chapter 1's case).

The student's planner runs on every recorded node type of datasets/topologies
and on relabelled copies of the text matrices (the same machine with its GPUs
enumerated in another order). The grader recomputes everything itself: the
pair bandwidths from the link classes and NCCL's constants
(datasets/lab07/node-types.csv), the expected communicator split, and the
optimum of the handout's cost model by an exhaustive search over mappings
(symmetric mappings skipped), against which the student's plan is scored.
"""

import csv
import itertools
import os
import re

from gradelib import CheckFailed, Lab, expect, perf_ratio

lab = Lab("lab07", title="8 卡拓扑优化", program="lab07")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOPO_DIR = os.path.join(ROOT, "datasets", "topologies")
NODE_TYPES = os.path.join(ROOT, "datasets", "lab07", "node-types.csv")
CHAPTER1 = "chapter1-hybrid-mesh.topo.txt"

ALPHA_S = 3.4e-6
UNBOUNDED = 1e30
# The driver's default workload: a 7B-class model (h 4096, s 2048, bf16, 32 layers), 8
# micro-batches of 1 sequence.
WORK = dict(act=2048.0 * 4096 * 2, model=6.7e9 * 2, layers=32, micro_batches=8)
# Compute of one step for the chapter-1 gain: 6 x params x tokens flops on 8 V100s at
# 125 TFLOP/s and 40% of peak (an assumption stated in the handout).
COMPUTE_S = 6 * 6.7e9 * (8 * 2048) / (8 * 125e12 * 0.40)
CHAPTER_GAIN = 0.35

LAYOUTS = [(4, 1, 2), (8, 1, 1), (2, 1, 4), (2, 2, 2), (4, 2, 1), (1, 2, 4)]
INVALID_LAYOUT = (3, 1, 2)
# Relabellings of the text matrices: new GPU i is recorded GPU PERMS[k][i].
PERMS = [(3, 6, 0, 5, 2, 7, 1, 4), (5, 1, 7, 2, 4, 0, 6, 3)]


# --- the model, written again from the handout ------------------------------------------

def pair_gbps(code, node):
    m = re.fullmatch(r"NV(\d+)", code)
    if m:
        return int(m.group(1)) * node["nvlink_gbps"]
    if code in ("PIX", "PXB", "PHB", "NODE"):
        return node["pcie_gbps"]
    if code == "SYS":
        return min(node["pcie_gbps"], node["sys_gbps"])
    return 0.0


def bw_matrix(links, node):
    n = len(links)
    return [[0.0 if a == b else pair_gbps(links[a][b], node) for b in range(n)] for a in range(n)]


class Model:
    """The handout's step-time model over one bandwidth matrix (ring values cached)."""

    def __init__(self, bw):
        self.bw = bw
        self.rings = {}

    def ring(self, members):
        key = frozenset(members)
        if key not in self.rings:
            first, rest = members[0], members[1:]
            if not rest:
                self.rings[key] = UNBOUNDED
            else:
                best = 0.0
                for order in itertools.permutations(rest):
                    cyc = (first,) + order
                    hop = min(self.bw[cyc[i]][cyc[(i + 1) % len(cyc)]] for i in range(len(cyc)))
                    best = max(best, hop)
                self.rings[key] = best
        return self.rings[key]

    def time(self, layout, g):
        tp, pp, dp = layout

        def at(t, d, p):
            return g[t + tp * (d + dp * p)]
        tp_bw = min(self.ring(tuple(at(t, d, p) for t in range(tp)))
                    for d in range(dp) for p in range(pp))
        dp_bw = min(self.ring(tuple(at(t, d, p) for d in range(dp)))
                    for t in range(tp) for p in range(pp))
        pp_bw = min((self.bw[at(t, d, p)][at(t, d, p + 1)] for t in range(tp)
                     for d in range(dp) for p in range(pp - 1)), default=UNBOUNDED)

        def ring_time(k, nbytes, gbps):
            return 0.0 if k <= 1 else 2 * (k - 1) * (ALPHA_S + nbytes / k / (gbps * 1e9))
        tp_s = 4.0 * WORK["layers"] / pp * WORK["micro_batches"] * ring_time(tp, WORK["act"], tp_bw)
        dp_s = ring_time(dp, WORK["model"] / (tp * pp), dp_bw)
        pp_s = 2.0 * WORK["micro_batches"] * (ALPHA_S + WORK["act"] / (pp_bw * 1e9)) if pp > 1 else 0
        return tp_s + dp_s + pp_s

    def optimum(self, layout):
        """Exhaustive over mappings; relabelling the TP indices or the DP indices of every
        group alike changes nothing, so only mappings with the GPUs of (t, 0, 0) and of
        (0, d, 0) increasing are tried."""
        tp, _, dp = layout
        n = len(self.bw)
        best, best_g = None, None
        for g in itertools.permutations(range(n)):
            if any(g[t] > g[t + 1] for t in range(tp - 1)):
                continue
            if any(g[tp * d] > g[tp * (d + 1)] for d in range(dp - 1)):
                continue
            t = self.time(layout, g)
            if best is None or t < best:
                best, best_g = t, g
        return best, best_g


# --- the inputs ---------------------------------------------------------------------------

def node_types():
    with open(NODE_TYPES, encoding="utf-8") as f:
        return {row["topology"]: {k: float(row[k]) for k in ("nvlink_gbps", "pcie_gbps",
                                                             "sys_gbps")}
                for row in csv.DictReader(f)}


def relabelled(ctx, name, links, perm):
    """Writes the GPU matrix of `name` with GPU i = recorded GPU perm[i]; returns its path."""
    n = len(perm)
    lines = ["\t" + "\t".join(f"GPU{i}" for i in range(n))]
    for i in range(n):
        cells = [" X " if i == j else links[perm[i]][perm[j]] for j in range(n)]
        lines.append(f"GPU{i}\t" + "\t".join(cells))
    path = ctx.out(f"{name}.relabelled{''.join(map(str, perm))}.topo.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run_plan(ctx, path, node, layouts, tag):
    args = [ctx.program, "plan", "--topo", os.path.relpath(path, ctx.root),
            "--node", f"{node['nvlink_gbps']!r},{node['pcie_gbps']!r},{node['sys_gbps']!r}"]
    for layout in layouts:
        args += ["--layout", ",".join(map(str, layout))]
    ctx.run(args + ["--json", ctx.out(tag + ".json")])
    return ctx.load_json(tag + ".json")


def cases(runs):
    """(run, layout entry) for every valid layout of every run."""
    for run in runs:
        for entry in run["layouts"]:
            if (entry["tp"], entry["pp"], entry["dp"]) != INVALID_LAYOUT:
                yield run, entry


def where(run, entry):
    return f"{run['name']}, tp={entry['tp']} pp={entry['pp']} dp={entry['dp']}"


def plan_of(run, entry):
    if entry["status"] != "success":
        raise CheckFailed(f"lab07_choose_plan failed on {where(run, entry)}",
                          expected="success", found=f"{entry['status']}: {entry['error']}")
    return entry["plan"]


# --- checks -------------------------------------------------------------------------------

@lab.check("sim.plans", "Planner runs on every recorded node type", points=0, backend="sim",
           timeout=60)
def sim_plans(ctx):
    runs = []
    for name, node in node_types().items():
        path = os.path.join(TOPO_DIR, name)
        layouts = LAYOUTS + ([INVALID_LAYOUT] if name == CHAPTER1 else [])
        run = run_plan(ctx, path, node, layouts, name)
        run.update(name=name, node=node, domains=None)
        runs.append(run)
        if name.endswith(".topo.txt"):
            for perm in PERMS:
                rp = relabelled(ctx, name, run["links"], perm)
                r2 = run_plan(ctx, rp, node, layouts, os.path.basename(rp))
                r2.update(name=f"{name} relabelled {''.join(map(str, perm))}", node=node,
                          perm=perm, base=name)
                runs.append(r2)
    for run in runs:
        run["model"] = Model(bw_matrix(run["links"], run["node"]))
    return runs


@lab.check("sim.split", "Communicator split colours and keys", points=15, backend="sim",
           parent="sim.plans")
def sim_split(ctx, runs):
    for run, entry in cases(runs):
        tp, pp, dp = entry["tp"], entry["pp"], entry["dp"]
        plan = plan_of(run, entry)
        n = run["ngpus"]
        for kind, coord, key_of in (("tp", lambda t, d, p: (d, p), lambda t, d, p: t),
                                    ("dp", lambda t, d, p: (t, p), lambda t, d, p: d),
                                    ("pp", lambda t, d, p: (t, d), lambda t, d, p: p)):
            want, got = {}, {}
            for r in range(n):
                t, d, p = r % tp, (r // tp) % dp, r // (tp * dp)
                want.setdefault(coord(t, d, p), []).append((key_of(t, d, p), r))
                got.setdefault(plan[f"{kind}_color"][r], []).append((plan[f"{kind}_key"][r], r))
            want_groups = sorted(sorted(r for _, r in g) for g in want.values())
            got_groups = sorted(sorted(r for _, r in g) for g in got.values())
            if want_groups != got_groups or any(c < 0 for c in plan[f"{kind}_color"]):
                raise CheckFailed(f"{kind.upper()} colours on {where(run, entry)} split the ranks "
                                  "wrongly", expected=str(want_groups), found=str(got_groups))
            for group in want.values():
                order = [r for _, r in sorted(group)]
                mine = [r for _, r in sorted((plan[f"{kind}_key"][r], r) for _, r in group)]
                if order != mine:
                    raise CheckFailed(f"{kind.upper()} keys on {where(run, entry)} order a group "
                                      "wrongly", expected=f"ranks in order {order}",
                                      found=f"ranks in order {mine}")
    chapter = next(r for r in runs if r["name"] == CHAPTER1)
    bad = next(e for e in chapter["layouts"] if (e["tp"], e["pp"], e["dp"]) == INVALID_LAYOUT)
    expect(f"status for tp*pp*dp = {INVALID_LAYOUT} on 8 GPUs", bad["status"], "invalid argument")


@lab.check("sim.bandwidth", "Pair bandwidths from the link classes", points=15, backend="sim",
           parent="sim.plans")
def sim_bandwidth(ctx, runs):
    for run in runs:
        want = run["model"].bw
        for a, row in enumerate(run["pair_gbps"]):
            for b, got in enumerate(row):
                if a != b and (got is None or abs(got - want[a][b]) > 1e-9 * max(1, want[a][b])):
                    raise CheckFailed(f"bandwidth of GPU{a}-GPU{b} ({run['links'][a][b]}) on "
                                      f"{run['name']}", expected=f"{want[a][b]:g} GB/s with "
                                      f"{run['node']}", found=f"{got} GB/s")


@lab.check("sim.valid", "Plans are valid: every GPU exactly once", points=15, backend="sim",
           parent="sim.plans")
def sim_valid(ctx, runs):
    for run, entry in cases(runs):
        g = plan_of(run, entry)["gpu_of_rank"]
        if sorted(g) != list(range(run["ngpus"])):
            raise CheckFailed(f"the mapping on {where(run, entry)} is not a permutation of the GPUs",
                              expected=f"each of 0..{run['ngpus'] - 1} once", found=str(g))


def nvlink_domains(links):
    """The groups of GPUs joined by the widest NVLink class (NV2 on the chapter's matrix)."""
    n = len(links)
    widest = max(int(c[2:]) for row in links for c in row if c.startswith("NV"))
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    for a in range(n):
        for b in range(n):
            if links[a][b] == f"NV{widest}":
                parent[find(a)] = find(b)
    groups = {}
    for a in range(n):
        groups.setdefault(find(a), set()).add(a)
    return list(groups.values())


@lab.check("sim.chapter1", "Chapter 1: TP=4 groups stay inside one NVLink domain", points=15,
           backend="sim", parent="sim.plans")
def sim_chapter1(ctx, runs):
    for run in runs:
        if CHAPTER1 not in run["name"]:
            continue
        domains = nvlink_domains(run["links"])
        entry = next(e for e in run["layouts"] if (e["tp"], e["pp"], e["dp"]) == (4, 1, 2))
        g = plan_of(run, entry)["gpu_of_rank"]
        for d in range(2):
            group = {g[t + 4 * d] for t in range(4)}
            if not any(group <= dom for dom in domains):
                raise CheckFailed(f"a TP group on {where(run, entry)} spans two NVLink domains",
                                  expected="each TP group inside one of " +
                                  " / ".join(str(sorted(x)) for x in domains),
                                  found=f"TP group on GPUs {sorted(group)}")


@lab.check("sim.optimum", "Step communication time within 5% of the optimum", points=40,
           backend="sim", kind="performance", timeout=120, parent="sim.plans")
def sim_optimum(ctx, runs):
    worst = {}
    for run, entry in cases(runs):
        layout = (entry["tp"], entry["pp"], entry["dp"])
        g = plan_of(run, entry)["gpu_of_rank"]
        if sorted(g) != list(range(run["ngpus"])):
            raise CheckFailed(f"invalid mapping on {where(run, entry)}", found=str(g))
        mine = run["model"].time(layout, g)
        best, best_g = run["model"].optimum(layout)
        ctx.log(f"{where(run, entry)}: yours {mine:.4f} s {g}, optimum {best:.4f} s {best_g}")
        base = run.get("base", run["name"])
        if base not in worst or best / mine < worst[base][1] / worst[base][0]:
            worst[base] = (mine, best, where(run, entry))
    for base, (mine, best, at) in worst.items():
        perf_ratio(ctx, student=lambda: mine, baseline=lambda: best, repeats=1,
                   higher_is_better=False, low=0.80, high=0.95, unit="s",
                   name=f"{base} (worst: {at}) step comm time")
    # Chapter 1's comparison: the naive plan (one TP group of all 8 GPUs) against the plan
    # the student chose for TP=4, DP=2 on the chapter's matrix.
    chapter = next(r for r in runs if r["name"] == CHAPTER1)
    entry = next(e for e in chapter["layouts"] if (e["tp"], e["pp"], e["dp"]) == (4, 1, 2))
    naive = chapter["model"].time((8, 1, 1), tuple(range(8)))
    mine = chapter["model"].time((4, 1, 2), plan_of(chapter, entry)["gpu_of_rank"])
    gain = (COMPUTE_S + naive) / (COMPUTE_S + mine) - 1
    ctx.metric("chapter1_naive_comm_s", naive)
    ctx.metric("chapter1_plan_comm_s", mine)
    ctx.metric("chapter1_predicted_gain", gain)
    ctx.perf_messages.append(
        f"chapter 1 case: naive TP=8 {naive:.3f} s of communication per step, your TP=4 x DP=2 "
        f"{mine:.3f} s; with {COMPUTE_S:.2f} s of compute the predicted throughput gain is "
        f"{gain * 100:+.0f}% (chapter 1 reports about +{CHAPTER_GAIN * 100:.0f}%)")


@lab.check("gpu.split", "TP AllGather through ncclCommSplit on this node's GPUs", points=10,
           backend="gpu", needs={"gpus": 4}, timeout=180, parent="sim.plans")
def gpu_split(ctx, _):
    n = min(8, ctx.resources.get("gpus", 0))
    n -= n % 2
    layout = f"{n // 2},1,2"
    res = {}
    for tag, extra in (("identity", ["--identity"]), ("plan", [])):
        ctx.mpirun(["gpu", "--layout", layout, "--node", "20,24,16", *extra,
                    "--json", ctx.out(tag + ".json")], ranks=n)
        res[tag] = ctx.load_json(tag + ".json")
        expect(f"{tag}: bytes gathered wrongly", res[tag]["wrong_bytes"], 0)
        expect(f"{tag}: ranks whose TP communicator differs from the colours",
               res[tag]["bad_split_ranks"], 0)
    ctx.metric("plan_busbw_gbps", res["plan"]["tp_allgather_busbw_gbps"])
    ctx.metric("identity_busbw_gbps", res["identity"]["tp_allgather_busbw_gbps"])
    ctx.log(f"mapping {res['plan']['gpu_of_rank']}")
    if res["plan"]["tp_allgather_busbw_gbps"] < 0.9 * res["identity"]["tp_allgather_busbw_gbps"]:
        raise CheckFailed("your plan's TP AllGather is slower than rank r on GPU r",
                          expected=f">= 0.9 x {res['identity']['tp_allgather_busbw_gbps']:.1f} GB/s",
                          found=f"{res['plan']['tp_allgather_busbw_gbps']:.1f} GB/s")
