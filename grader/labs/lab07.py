"""lab07: topology optimisation of one or two 8-GPU servers (chapter 1's case).

The student's planner chooses the layout (TP x PP x DP), Megatron's rank order and every
rank's GPU (CUDA_VISIBLE_DEVICES), for a model on each recorded node type of
datasets/topologies (and two of them joined by their NICs), asking the harness's model
(common/sim/sim_train.h over the channel model lab04 uses) at most `budget` times. The
harness costs the final plan itself; beside it, the same run's reference mode gives the
best plan the harness's own search finds and the best the index mapping can do. Relabelled
copies of the text matrices are the same machines with their GPUs enumerated in another
order. Performance is scored only on node types where the index mapping loses.
"""

import csv
import os
import random

from gradelib import CheckFailed, Lab, expect, perf_samples, ramp
from gradelib.plans import check_plans, expect_as_fast_as_fix, run_plans
from gradelib.topologies import perms_splitting_halves, relabelled_text

lab = Lab("lab07", title="8 卡拓扑优化: 并行布局与 rank 到 GPU 的映射", program="lab07")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOPO_DIR = os.path.join("datasets", "topologies")
CHAPTER = ("chapter1-printed.topo.txt", "chapter1-hybrid-mesh.topo.txt")
TWO_NODES = ("dgx1-v100.topo.txt", "hgx-a100.topo.txt", "hgx-h200.topo.txt",
             "pcie-rtx4090-8x.topo.txt")
COPIES = 2             # relabelled copies of each text matrix, drawn afresh every run
TRIVIAL = 0.95         # the index mapping within 5% of the best: nothing to decide there
CHAPTER_GAIN = 0.35    # chapter 1: TP 4 inside a domain, DP across: about 35% faster
BUDGET = 400

# Models sized to the GPUs' memory, so that the layout is a decision (sim_train.h: 16 bytes
# per parameter of the model states, activations with selective recomputation). One node:
# 16 sequences of 2048 tokens per step; two nodes: 32.
MODELS = {  # GiB of one GPU -> (one node, two nodes): params, layers, hidden
    24: ((2.7e9, 32, 2560), (6.7e9, 32, 4096)),
    32: ((6.7e9, 32, 4096), (13e9, 40, 5120)),
    80: ((13e9, 40, 5120), (30e9, 48, 7168)),
    140: ((30e9, 48, 7168), (70e9, 80, 8192)),
}


def node_types():
    with open(os.path.join(ROOT, TOPO_DIR, "node-types.csv"), encoding="utf-8") as f:
        return list(csv.DictReader(f))


# One more job on two DGX-1: long sequences and many micro-batches, where the pipeline's
# activations outweigh the gradients and Megatron's other rank order pays.
LONG = ("dgx1-v100.topo.txt", 2, (1.3e9, 24, 2048), 16384, 128, "long sequences")


def base_cases():
    """(name, case keys) of every node type on one node, and of some on two."""
    jobs = []
    for row in node_types():
        mem = int(float(row["gpu_mem_gib"]))
        for nodes in (1, 2):
            if nodes == 1 or row["topology"] in TWO_NODES:
                jobs.append((row, nodes, MODELS[mem][nodes - 1], 2048, 16 * nodes, ""))
        if row["topology"] == LONG[0]:
            jobs.append((row,) + LONG[1:])
    out = []
    for row, nodes, (params, layers, hidden), seq, batch, label in jobs:
        keys = {"topo": os.path.join(TOPO_DIR, row["topology"]), "nodes": nodes,
                "sm": row["sm"], "nvlink": row["nvlink_gbps"], "pci": row["pcie_gbps"],
                "sys": row["sys_gbps"], "net": row["net_gbps"], "mem_gib": row["gpu_mem_gib"],
                "tflops": row["tflops"], "params": params, "layers": layers, "hidden": hidden,
                "seq": seq, "global_batch": batch, "budget": BUDGET}
        out.append((f"{row['topology']} x{nodes}" + (f", {label}" if label else ""), keys))
    return out


def relabelled(ctx, name, node, perm):
    """Writes the node with GPU i = recorded GPU perm[i]; returns its path."""
    path = ctx.out(f"{os.path.basename(name.split()[0])}.{''.join(map(str, perm))}.topo.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(relabelled_text(node, perm))
    return os.path.relpath(path, ROOT)


def where(case):
    return f"{case['keys']['topo']} ({case['keys']['nodes']} node(s))"


# --- checks ----------------------------------------------------------------------------

@lab.check("sim.reference", "The harness's best plans and the index mapping", points=0,
           backend="sim", timeout=120)
def sim_reference(ctx):
    base = base_cases()
    # Under the sanitizers one case of two nodes stands for them all (the searches of
    # sixteen GPUs are nine tenths of this check's time there).
    two = ctx.sanitizer_subset([name for name, keys in base if keys["nodes"] == 2], 1)
    base = [(name, keys) for name, keys in base if keys["nodes"] == 1 or name in two]
    rows = ctx.run_cases("reference", [dict(keys, topo_json=ctx.out(f"node{i}.json"))
                                       for i, (_, keys) in enumerate(base)],
                         name="reference-base")
    cases = []
    for i, ((name, keys), ref) in enumerate(zip(base, rows)):
        cases.append({"name": name, "base": name, "keys": keys, "ref": ref})
        if keys["topo"].endswith(".topo.txt"):
            node = ctx.load_json(f"node{i}.json")
            perms = perms_splitting_halves(8, COPIES if keys["nodes"] == 1 else 1)
            for perm in ctx.sanitizer_subset(perms, 1):
                copy = dict(keys, topo=relabelled(ctx, name, node, perm))
                cases.append({"name": f"{name} relabelled {''.join(map(str, perm))}",
                              "base": name, "keys": copy})
    # A copy's best plan is its base's, relabelled: the search tries every permutation of
    # a node's GPUs, so relabelling maps its candidates onto themselves (tests/sim/
    # test_relabelled.py). Only the index mapping, which relabelling changes, is costed.
    copies = [c for c in cases if "ref" not in c]
    bases = {c["name"]: c["ref"] for c in cases if "ref" in c}
    for c, naive in zip(copies, ctx.run_cases("reference", [dict(c["keys"], naive_only=1)
                                                            for c in copies],
                                              name="reference-copies")):
        c["ref"] = dict(bases[c["base"]], **{k: v for k, v in naive.items()
                                             if k.startswith("naive_")})
    chapter = [c for c in cases if os.path.basename(c["keys"]["topo"]).split(".")[0] in
               [x.split(".")[0] for x in CHAPTER] and c["keys"]["nodes"] == 1]
    fixes = ctx.run_cases("reference", [dict(c["keys"], layout="4,1,2") for c in chapter],
                          name="reference-chapter")
    naive8 = ctx.run_cases("cost", [dict(c["keys"], tp=8, pp=1, dp=1, visible="0,1,2,3,4,5,6,7")
                                    for c in chapter], name="cost-chapter")
    for c, fix, tp8 in zip(chapter, fixes, naive8):
        c["chapter_fix"], c["chapter_tp8"] = fix, tp8
    for c in cases:
        r = c["ref"]
        best = f"[{r['best_visible']}]" if c["name"] == c["base"] else "(its base's, relabelled)"
        ctx.log(f"{c['name']}: best {r['best_layout']} {r['best_order']} {best} "
                f"{r['best_step_s']:.4f} s; index mapping {r['naive_layout']} "
                f"{r['naive_step_s']:.4f} s")
    return cases


@lab.check("sim.plans", "Your planner runs on every case", points=0, backend="sim",
           parent="sim.reference", timeout=120)
def sim_plans(ctx, cases):
    return run_plans(ctx, cases)


def groups(tp, pp, dp, order, kind):
    """{group coordinate: [(key, rank), ...]} of one kind for Megatron's rank order."""
    out = {}
    for r in range(tp * pp * dp):
        t, rest = r % tp, r // tp
        s, d = (rest % pp, rest // pp) if order == "tp-pp-dp" else (rest // dp, rest % dp)
        coord, key = {"tp": ((d, s), t), "dp": ((t, s), d), "pp": ((t, d), s)}[kind]
        out.setdefault(coord, []).append((key, r))
    return out


@lab.check("sim.split", "Communicator split colours and keys", points=15, backend="sim")
def sim_split(ctx):
    layouts = [(4, 1, 2), (8, 1, 1), (2, 1, 4), (2, 2, 2), (4, 2, 1), (1, 2, 4), (1, 8, 1),
               (4, 2, 2), (2, 4, 2), (8, 2, 1), (2, 2, 4), (1, 4, 4)]
    cases = [dict(tp=tp, pp=pp, dp=dp, order=o) for tp, pp, dp in layouts
             for o in ("tp-dp-pp", "tp-pp-dp")]
    rows = ctx.run_cases("split", cases + [dict(tp=3, pp=1, dp=0)])
    for case, row in zip(cases, rows):
        what = f"tp={case['tp']} pp={case['pp']} dp={case['dp']} order {case['order']}"
        expect(f"{what}: status", row["status"], "success")
        for kind in ("tp", "dp", "pp"):
            want = groups(case["tp"], case["pp"], case["dp"], case["order"], kind)
            colors, keys = row[f"{kind}_color"], row[f"{kind}_key"]
            got = {}
            for r, (col, key) in enumerate(zip(colors, keys)):
                got.setdefault(col, []).append((key, r))
            want_sets = sorted(sorted(r for _, r in g) for g in want.values())
            got_sets = sorted(sorted(r for _, r in g) for g in got.values())
            if want_sets != got_sets or any(col < 0 for col in colors):
                raise CheckFailed(f"{kind.upper()} colours of {what} split the ranks wrongly",
                                  expected=str(want_sets), found=str(got_sets))
            for g in want.values():
                order = [r for _, r in sorted(g)]
                mine = [r for _, r in sorted((keys[r], r) for _, r in g)]
                if order != mine:
                    raise CheckFailed(f"{kind.upper()} keys of {what} order a group wrongly",
                                      expected=f"ranks in order {order}",
                                      found=f"ranks in order {mine}")
    expect("status for dp = 0", rows[-1]["status"], "invalid argument")


@lab.check("sim.visible", "CUDA_VISIBLE_DEVICES of every node", points=10, backend="sim")
def sim_visible(ctx):
    rng = random.Random()
    cases, want = [], []
    for nodes in (1, 1, 2, 2, 2):
        gpu = []
        for n in range(nodes):
            local = list(range(8))
            rng.shuffle(local)
            gpu += [n * 8 + g for g in local]
        cases.append(dict(nodes=nodes, gpus=8, mapping=",".join(map(str, gpu))))
        want.append(gpu)
    moved = list(range(16))
    moved[3], moved[12] = moved[12], moved[3]  # rank 3 on a GPU of the other node
    twice = list(range(8))
    twice[5] = twice[2]
    bad = [dict(nodes=2, gpus=8, mapping=",".join(map(str, moved))),
           dict(nodes=1, gpus=8, mapping=",".join(map(str, twice)))]
    rows = ctx.run_cases("visible", cases + bad)
    for case, gpu, row in zip(cases, want, rows):
        what = f"mapping {case['mapping']}"
        expect(f"{what}: status", row["status"], "success")
        lists = row["visible"].split(";")
        expect(f"{what}: CUDA_VISIBLE_DEVICES of how many nodes", len(lists), case["nodes"])
        for n, text in enumerate(lists):
            try:
                got = [n * 8 + int(x) for x in text.split(",")]
            except ValueError:
                raise CheckFailed(f"{what}: node {n} CUDA_VISIBLE_DEVICES is not a list of "
                                  f"GPU numbers", found=repr(text))
            expect(f"{what}: node {n} CUDA_VISIBLE_DEVICES=\"{text}\" puts ranks "
                   f"{n * 8}..{n * 8 + 7} on GPUs", got, gpu[n * 8:(n + 1) * 8])
    expect("a rank moved to the other node: status", rows[-2]["status"], "invalid argument")
    expect("two ranks on one GPU: status", rows[-1]["status"], "invalid argument")


@lab.check("sim.valid", "Plans are launchable and fit in memory", points=0, backend="sim",
           parent="sim.plans")
def sim_valid(ctx, cases):
    return check_plans(cases, where, planner="lab07_choose_plan",
                       launchable="tp x pp x dp = every GPU, each GPU once in each node's "
                                  "CUDA_VISIBLE_DEVICES, a known NCCL_P2P_LEVEL",
                       layout=lambda p: f"layout {p['layout']}",
                       gib=lambda c: c["keys"]["mem_gib"], calls="calls of lab07_step_time",
                       budget=BUDGET)


@lab.check("sim.chapter1", "Chapter 1: no slower than TP=4 inside the NVLink domains",
           points=15, backend="sim", parent="sim.valid")
def sim_chapter1(ctx, cases):
    for c in cases:
        if "chapter_fix" not in c:
            continue
        fix, tp8, p = c["chapter_fix"], c["chapter_tp8"], c["plan"]
        ctx.log(f"{c['name']}: TP=8 in index order {tp8['step_s']:.4f} s, the chapter's fix "
                f"{fix['best_step_s']:.4f} s [{fix['best_visible']}], yours {p['step_s']:.4f} s "
                f"({p['layout']} [{p['visible']}])")
        expect_as_fast_as_fix(where(c), p, fix,
                              f"TP=4 groups inside the NV2 domains, GPUs {fix['best_visible']}, "
                              "DP across",
                              f"layout {p['layout']}, CUDA_VISIBLE_DEVICES={p['visible']}")
    # What the model says about the chapter's 35%.
    for c in cases:
        if "chapter_fix" in c and c["name"] == c["base"]:
            gain = c["chapter_tp8"]["step_s"] / c["plan"]["step_s"] - 1
            ctx.metric(f"{c['name'].split('.')[0]}_predicted_gain", round(gain, 4))
            ctx.log(f"{c['name']}: predicted throughput gain over TP=8 {gain * 100:+.0f}% "
                    f"(chapter 1 reports about +{CHAPTER_GAIN * 100:.0f}%)")


@lab.check("sim.optimum", "Step overhead within 5% of the harness's best plan", points=60,
           backend="sim", kind="performance", parent="sim.valid")
def sim_optimum(ctx, cases):
    """Per node type, its worst case: full points within 5% of the best plan, none for doing
    no better than the index mapping with its best layout (or below 0.80 where that mapping
    is already good), linear in between. The ratios are of the time beyond the computation."""
    worst, scored = {}, set()
    for c in cases:
        r, p = c["ref"], c["plan"]
        best, naive, mine = r["best_overhead_s"], r["naive_overhead_s"], p["overhead_s"]
        # where the index mapping loses, it scores nothing; elsewhere the usual 0.80
        low = max(best / naive, 0.80) if naive > best / TRIVIAL else 0.80
        if naive > best / TRIVIAL:
            scored.add(c["base"])
        frac = ramp(best / mine, low, 0.95)
        if c["base"] not in worst or frac < worst[c["base"]][0]:
            worst[c["base"]] = (frac, low, mine, best, c)
    series = {"yours": [], "harness's best": [], "index mapping": []}
    for i, (base, (_, low, mine, best, c)) in enumerate(sorted(worst.items())):
        series["yours"].append((i + 1, mine))
        series["harness's best"].append((i + 1, best))
        series["index mapping"].append((i + 1, c["ref"]["naive_overhead_s"]))
        if base not in scored:
            ctx.log(f"{base}: not scored (the index mapping is within 5% of the best)")
            continue
        # The model is deterministic: one sample each is exact.
        perf_samples(ctx, student=[mine], baseline=[best], higher_is_better=False,
                     low=round(low, 4), high=0.95, unit="s",
                     name=f"{base}: worst case {c['keys']['topo']} layout {c['plan']['layout']} "
                          f"[{c['plan']['visible']}], time beyond the computation")
    ctx.metric("node_types_scored", len(scored))
    ctx.plot("lab07-overhead", series,
             xlabel="node type (" + ", ".join(f"{i + 1} {b}" for i, b in
                                               enumerate(sorted(worst))) + ")",
             ylabel="step time beyond the computation (s)", logx=False,
             title="lab07: plans on the recorded node types (worst relabelling)")


# --- gpu --------------------------------------------------------------------------------

NVLINK_GBPS = {70: 20, 80: 20, 86: 12, 89: 12, 90: 20.6, 100: 40.1}


@lab.check("gpu.split", "TP AllGather on this node's GPUs with your split and devices",
           points=10, backend="gpu", kind="performance", needs={"gpus": 4}, timeout=300)
def gpu_split(ctx):
    n = min(8, ctx.resources.get("gpus", 0))
    n -= n % 2
    smi = ctx.run(["nvidia-smi", "topo", "-m"])
    with open(ctx.out("topo.txt"), "w", encoding="utf-8") as f:
        f.write(smi.stdout)
    cap = ctx.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"])
    sm = int(round(float(cap.stdout.split()[0]) * 10))
    keys = {"topo": os.path.relpath(ctx.out("topo.txt"), ROOT), "sm": sm,
            "nvlink": NVLINK_GBPS.get(sm, 20), "pci": 24, "sys": 10, "net": 25, "mem_gib": 80,
            "tflops": 312, "params": 1e9, "layers": 16, "hidden": 4096, "global_batch": 16,
            "layout": f"{n // 2},1,2"}
    ref = ctx.run_cases("reference", [keys])[0]
    mapping = ref["best_gpu_of_rank"]
    vis = ctx.run_cases("visible", [{"nodes": 1, "gpus": n, "mapping": mapping}])[0]
    expect("status of lab07_visible_devices", vis["status"], "success")
    args = ["--tp", str(n // 2), "--pp", "1", "--dp", "2", "--bytes", "64M", "--repeats", "1",
            "--iters", "20"]
    mine, base = [], []
    for _ in range(3):  # interleaved: rank r on GPU r, then your CUDA_VISIBLE_DEVICES
        for env, out in (({"CUDA_VISIBLE_DEVICES": ",".join(map(str, range(n)))}, base),
                         ({"CUDA_VISIBLE_DEVICES": vis["visible"]}, mine)):
            data = ctx.run_lab("gpu", args, ranks=n, backend="gpu", env=env)
            row = data["rows"][0]
            expect("ranks whose TP communicator differs from your colours",
                   row["bad_split_ranks"], 0)
            expect("AllGather elements NCCL got wrong", row["wrong"], 0)
            out.append(row["tp_busbw"][0])
    ctx.log(f"mapping {mapping}, CUDA_VISIBLE_DEVICES={vis['visible']}")
    perf_samples(ctx, student=mine, baseline=base, low=0.8, high=0.9,
                 name="TP AllGather busbw (64 MiB), yours vs rank r on GPU r")
