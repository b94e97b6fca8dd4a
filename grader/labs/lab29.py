"""lab29: chapter 1's 256-server case, end to end.

The student writes the whole job's step from the simulator's probe of a plan (graded against
the harness's own computation of the same model on fresh jobs and plans), and the plan: the
TP x DP layout, the mapping (one CUDA_VISIBLE_DEVICES for every server) and NCCL_P2P_LEVEL,
scored by its simulated step against the harness's own search and the chapter's baseline
(TP=8 across both NVLink domains). The server is chapter 1's hybrid mesh with four NICs
(datasets/lab29), as recorded and relabelled (its GPUs enumerated in another order, fresh
each run), so that a fixed answer does not pass. The answers file compares the predicted
gain with the chapter's reported ~35%.
"""

import os
import random

from gradelib import Lab, expect, expect_close, perf_samples
from gradelib import answers
from gradelib.plans import check_plans, expect_as_fast_as_fix, run_plans
from gradelib.topologies import perms_splitting_halves, relabelled_text

lab = Lab("lab29", title="典型案例复盘: 第 1 章的 256 台服务器", program="lab29")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOPO = os.path.join("datasets", "lab29", "chapter1-hybrid-mesh-4nic.topo.txt")
REPORTED_GAIN = 35.0   # chapter 1: "about 35%" more throughput
TRIVIAL = 0.95         # the baseline within 5% of the best: nothing to decide there
BUDGET = 100
COPIES = 2             # relabelled copies of the chapter's server, drawn afresh every run

# Jobs (params, layers, hidden, servers, global batch); memory decides which layouts fit on
# a 32 GiB V100: 16 bytes per parameter of the model states, activations of 34 s b h a layer.
CHAPTER = dict(params=6.7e9, layers=32, hidden=4096, nodes=256, global_batch=2048)
JOBS = {
    "chapter1": CHAPTER,
    "1.3B x 256": dict(params=1.3e9, layers=24, hidden=2048, nodes=256, global_batch=2048),
    "2.7B x 128": dict(params=2.7e9, layers=32, hidden=2560, nodes=128, global_batch=1024),
    "13B x 256": dict(params=13e9, layers=40, hidden=5120, nodes=256, global_batch=2048),
}
BASELINE = dict(tp=8, visible="0,1,2,3,4,5,6,7")


def read_node(path):
    """{"devices": [...], "links": [[...]]} of a topo -m text (the form relabelled_text takes)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n\n")[0].splitlines()
    names = lines[0].split()
    links = [line.split()[1:1 + len(names)] for line in lines[1:1 + len(names)]]
    return {"devices": names, "links": links}


def relabelled(ctx, perm):
    path = ctx.out(f"chapter1.{''.join(map(str, perm))}.topo.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(relabelled_text(read_node(TOPO), perm))
    return os.path.relpath(path, ROOT)


def keys_of(job, topo):
    return dict(JOBS[job], topo=topo, budget=BUDGET)


# --- 1. the step of a plan ---------------------------------------------------------------

def predict_cases(rng):
    """Plans on the chapter's job and on fresh jobs, with the plans that must be refused."""
    out = []
    perm = list(range(8))
    for tp, vis, p2p in ((8, "0,1,2,3,4,5,6,7", ""), (4, "0,1,2,3,4,5,6,7", ""),
                         (4, "0,4,1,5,2,6,3,7", ""), (2, "0,4,1,5,2,6,3,7", "NVL"),
                         (1, "0,1,2,3,4,5,6,7", "")):
        out.append(dict(CHAPTER, topo=TOPO, tp=tp, visible=vis, p2p=p2p))
    for _ in range(6):
        nodes = rng.choice((16, 64, 128, 512, 1024))
        rng.shuffle(perm)
        out.append(dict(topo=TOPO, nodes=nodes, global_batch=nodes * 8 * rng.choice((1, 2, 4)),
                        params=round(rng.uniform(0.5, 20), 2) * 1e9,
                        layers=rng.choice((16, 24, 32, 40)), hidden=rng.choice((2048, 4096, 5120)),
                        seq=rng.choice((1024, 2048, 4096)), tp=rng.choice((1, 2, 4, 8)),
                        visible=",".join(map(str, perm)), p2p=rng.choice(("", "", "PXB", "SYS"))))
    bad = [dict(CHAPTER, topo=TOPO, tp=3, visible="0,1,2,3,4,5,6,7"),
           dict(CHAPTER, topo=TOPO, global_batch=2048 + 8, tp=1, visible="0,1,2,3,4,5,6,7")]
    return out, bad


@lab.check("sim.predict", "The step of the whole job from the simulator's probe", points=25,
           backend="sim")
def sim_predict(ctx):
    good, bad = predict_cases(random.Random())
    rows = ctx.run_cases("predict", good + bad)
    for case, row in zip(good, rows):
        what = (f"{case['nodes']} servers, {case['params'] / 1e9:g}B params, tp={case['tp']} "
                f"CUDA_VISIBLE_DEVICES={case['visible']}")
        expect(f"{what}: status", row["status"], "success")
        for key in ("step_s", "compute_s", "tp_s", "dp_s", "mem_gb"):
            expect_close(f"{what}: {key}", row[key], row[f"want_{key}"], rel=1e-6, abs=1e-12)
        expect(f"{what}: micro_batches", row["micro_batches"], row["want_micro_batches"])
        expect(f"{what}: fits", row["fits"], row["want_fits"])
    expect("tp=3 (does not divide 8 GPUs): status", rows[len(good)]["status"],
           "invalid argument")
    expect("a global batch of 2056 over dp = 2048: status", rows[len(good) + 1]["status"],
           "invalid argument")


# --- 2. the plan -------------------------------------------------------------------------

@lab.check("sim.reference", "The harness's best plans and the baseline", points=0,
           backend="sim", timeout=120)
def sim_reference(ctx):
    cases = [{"name": name, "job": name, "keys": keys_of(name, TOPO)} for name in JOBS]
    for perm in perms_splitting_halves(8, COPIES):
        topo = relabelled(ctx, perm)
        cases.append({"name": f"chapter1 relabelled {''.join(map(str, perm))}",
                      "job": "chapter1", "keys": keys_of("chapter1", topo)})
    for c, ref in zip(cases, ctx.run_cases("reference", [c["keys"] for c in cases],
                                           name="reference")):
        c["ref"] = ref
    chapter = [c for c in cases if c["job"] == "chapter1"]
    for c, fix in zip(chapter, ctx.run_cases("reference", [dict(c["keys"], only_tp=4)
                                                           for c in chapter], name="fix")):
        c["fix"] = fix
    for c in cases:
        r = c["ref"]
        ctx.log(f"{c['name']}: best tp={r['best_tp']} [{r['best_visible']}] "
                f"{r['best_step_s']:.4f} s; baseline {r['base_step_s']:.4f} s")
    return cases


@lab.check("sim.plans", "Your planner runs on every case", points=0, backend="sim",
           parent="sim.reference", timeout=120)
def sim_plans(ctx, cases):
    return run_plans(ctx, cases)


def where(c):
    return f"{c['name']} ({c['keys']['nodes']} servers, {c['keys']['params'] / 1e9:g}B)"


@lab.check("sim.valid", "Plans are launchable and fit in memory", points=0, backend="sim",
           parent="sim.plans")
def sim_valid(ctx, cases):
    return check_plans(cases, where, planner="lab29_choose",
                       launchable="tp dividing 8, every GPU once in CUDA_VISIBLE_DEVICES, "
                                  "a known NCCL_P2P_LEVEL",
                       layout=lambda p: f"tp={p['tp']}", gib=lambda c: 32, calls="probes",
                       budget=BUDGET)


@lab.check("sim.chapter1", "Chapter 1: no slower than TP=4 inside the NVLink domains",
           points=15, backend="sim", parent="sim.valid")
def sim_chapter1(ctx, cases):
    for c in cases:
        if "fix" not in c:
            continue
        fix, p = c["fix"], c["plan"]
        ctx.log(f"{c['name']}: baseline {p['base_step_s']:.4f} s, TP=4 in the domains "
                f"{fix['best_step_s']:.4f} s [{fix['best_visible']}], yours {p['step_s']:.4f} s "
                f"(tp={p['tp']} [{p['visible']}])")
        expect_as_fast_as_fix(where(c), p, fix,
                              f"tp=4, CUDA_VISIBLE_DEVICES={fix['best_visible']}",
                              f"tp={p['tp']}, CUDA_VISIBLE_DEVICES={p['visible']}")


@lab.check("sim.layout", "Step overhead within 3% of the harness's best plan", points=40,
           backend="sim", kind="decision", parent="sim.valid")
def sim_layout(ctx, cases):
    """Per job, its worst case: full points within 3% of the harness's best plan's time beyond
    the computation, none for doing no better than the baseline, linear in between. Jobs where
    the baseline is within 5% of the best are shown, not scored."""
    worst = {}
    for c in cases:
        r, p = c["ref"], c["plan"]
        ratio = r["best_overhead_s"] / p["overhead_s"]
        if c["job"] not in worst or ratio < worst[c["job"]][0]:
            worst[c["job"]] = (ratio, c)
    series = {"baseline": [], "yours": [], "harness's best": []}
    scored = 0
    for i, job in enumerate(JOBS):
        _, c = worst[job]
        r, p = c["ref"], c["plan"]
        series["baseline"].append((i + 1, r["base_overhead_s"]))
        series["yours"].append((i + 1, p["overhead_s"]))
        series["harness's best"].append((i + 1, r["best_overhead_s"]))
        low = r["best_overhead_s"] / r["base_overhead_s"]
        if low > TRIVIAL:
            ctx.log(f"{job}: not scored (the baseline is within 5% of the best)")
            continue
        scored += 1
        # The model is deterministic: one sample each is exact.
        perf_samples(ctx, student=[p["overhead_s"]], baseline=[r["best_overhead_s"]],
                     higher_is_better=False, low=round(low, 4), high=0.97, unit="s",
                     name=f"{c['name']}: tp={p['tp']} [{p['visible']}] "
                          f"p2p={p['p2p_level'] or '-'}, time beyond the computation")
    ctx.metric("jobs_scored", scored)
    ctx.plot("lab29-overhead", series,
             xlabel="job (" + ", ".join(f"{i + 1} {j}" for i, j in enumerate(JOBS)) + ")",
             ylabel="step time beyond the computation (s)", logx=False,
             title="lab29: baseline, your plan and the harness's best (worst relabelling)")


# --- 3. the chapter's 35% -----------------------------------------------------------------

@lab.check("sim.answers", "思考: the predicted gain against the chapter's ~35%", points=20,
           backend="sim", kind="question", parent="sim.valid")
def sim_answers(ctx, cases):
    c = next(c for c in cases if c["name"] == "chapter1")
    p = c["plan"]
    gain = (p["base_step_s"] / p["step_s"] - 1) * 100
    saving = {k: p[f"base_{k}_s"] - p[f"{k}_s"] for k in ("tp", "dp")}
    largest = max(saving, key=saving.get)
    side = "higher" if gain > REPORTED_GAIN else "lower"
    ctx.log(f"chapter1: predicted gain {gain:+.1f}% (chapter: +{REPORTED_GAIN:.0f}%), savings "
            + ", ".join(f"{k} {v:+.4f} s" for k, v in saving.items()))
    given = answers.read_answers(ctx)
    answers.score_answers(ctx, [
        answers.check_answer(given, "predicted_gain_pct", lambda v: abs(v - gain) <= 0.5,
                             f"{gain:.1f} (your plan's throughput gain over the baseline, %)",
                             number=True),
        answers.check_answer(given, "largest_saving", lambda v: v.lower() == largest,
                             f"{largest} (the term that shrinks most: tp or dp)"),
        answers.check_answer(given, "vs_reported", lambda v: v.lower() == side,
                             f"{side} (the model's gain against the reported 35%)"),
    ])
