"""lab19: topology-aware scheduling: Slurm hostlists, the tree plugin's topology.conf, and a job
placement policy replayed over job traces.

The student's hostlists are expanded by the grader's own reading of Slurm's syntax and compared
with the names (and with the length of Slurm's own compressed form); the student's topology.conf
is parsed as topology.conf(5) says and compared, switch by switch, with the fabric (fresh
fabrics every run, and the recorded ones; tests/cluster also loads it into a real slurmctld).
The policy places every job of a replayed trace (harness_replay.c): fresh traces drawn from the
Helios Venus statistics (grader/labs/_lab19_model.py) and the recorded ones of datasets/lab19,
on three recorded fabrics. Its consequences are scored against the topology-blind first fit
replayed on the same traces, and against the reference solution's recorded results.
"""

import json
import os
import random
import sys

from gradelib import CheckFailed, Lab, answers, ramp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _lab19_model as model  # noqa: E402  (the grader's model of hostlists, fabrics, traces)

lab = Lab("lab19", title="拓扑感知调度", program="lab19")

FABRICS = ["leafspine-128", "pods-192", "su-100"]
FRESH_HOURS, FRESH_LOAD = 48, 1.0
# Fresh traces per fabric, scored on their mean: one 48-hour trace is a small sample. Over 300
# seeds first fit's fragmentation on one trace ranged from 0.75x to 2.5x the reference's, so a
# threshold that caught worse-than-first-fit policies also failed the reference now and then;
# the mean of 4 traces halves that spread (see sim_frag; scripts/lab19_fresh_survey.py measures
# both, --traces 1 and 4).
FRESH_TRACES = 4
METRICS = ("spread", "excess", "slowdown", "frag")


def seed_of(name):
    value = os.environ.get(name)
    return int(value) if value else random.randrange(1 << 30)


def data(ctx, *parts):
    """A path under datasets/lab19 of the tree being graded."""
    return os.path.join(ctx.root, "datasets", "lab19", *parts)


def fabric_path(ctx, name):
    return data(ctx, "fabrics", name + ".fabric")


def read_fabric(path):
    """The fabric file as the model's dict (for comparing topology.conf)."""
    switches, nodes = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if w and w[0] == "switch":
                switches.append({"name": w[1], "level": int(w[3]),
                                 "parent": None if w[5] == "-" else w[5]})
            elif w and w[0] == "node":
                nodes.append({"name": w[1], "leaf": w[2]})
    return {"switches": switches, "nodes": nodes}


def require_success(rows, what):
    for i, r in enumerate(rows):
        if r.get("status") != "success":
            raise CheckFailed(f"{what(i)}: your function failed", expected="success",
                              found=f"{r.get('status')}: {r.get('error', '')}")


# --- 1. hostlists -------------------------------------------------------------------------------

def name_sets(rng):
    """Sets of host names: subsets of fresh fabrics' names, shuffled, and the corner cases."""
    sets = [["dgx001"], ["login"], ["x9", "x10", "x11"], ["dgx099", "dgx100", "dgx101"],
            ["n1", "n2", "n3", "n10", "n11"], ["gpu-a01", "gpu-a02", "gpu-b01"],
            ["a1", "b2", "a2", "a3", "b3"], [f"node{i:04d}" for i in range(1, 400, 2)]]
    for k in range(24):
        names = [n["name"] for n in model.random_fabric(rng, k)["nodes"]]
        sets.append(rng.sample(names, rng.randint(1, len(names))))
    for s in sets:
        rng.shuffle(s)
    return sets


@lab.check("cpu.hostlist", "Slurm hostlists: exactly the names, as compact as Slurm's", points=15,
           backend="cpu")
def cpu_hostlist(ctx):
    rng = random.Random(seed_of("COMMLAB_LAB19_SEED"))
    sets = name_sets(rng)
    rows = ctx.run_cases("hostlist", [{"names": ",".join(s)} for s in sets])
    require_success(rows, lambda i: f"names {model.compress(sets[i])}")
    for names, r in zip(sets, rows):
        want = model.compress(names)
        try:
            got = model.expand(r["hostlist"])
        except model.HostlistError as e:
            raise CheckFailed(f"names {want}: your hostlist does not parse", expected=want,
                              found=r["hostlist"], details=str(e)) from None
        if sorted(got) != sorted(names):
            extra, missing = sorted(set(got) - set(names)), sorted(set(names) - set(got))
            raise CheckFailed(f"names {want}: your hostlist names other hosts", expected=want,
                              found=r["hostlist"],
                              details=(f"not in the set: {', '.join(extra[:8])}\n" if extra else "")
                              + (f"missing: {', '.join(missing[:8])}\n" if missing else "")
                              + ("a host named twice" if len(got) != len(set(got)) else ""))
        if len(r["hostlist"]) > len(want):
            raise CheckFailed(f"names {want}: longer than Slurm's own hostlist",
                              expected=f"{len(want)} characters or fewer ({want})",
                              found=f"{len(r['hostlist'])} ({r['hostlist']})")


# --- 2. topology.conf ---------------------------------------------------------------------------

@lab.check("cpu.topology", "topology.conf of the tree plugin: every switch, its nodes or switches",
           points=20, backend="cpu")
def cpu_topology(ctx):
    rng = random.Random(seed_of("COMMLAB_LAB19_SEED") + 1)
    fabrics, paths = [], []
    for k in range(6):
        f = model.random_fabric(rng, k)
        path = ctx.out(f"fresh-{k}.fabric")
        model.write_fabric(f, path)
        fabrics.append(f)
        paths.append(path)
    for name in FABRICS:
        paths.append(fabric_path(ctx, name))
        fabrics.append(read_fabric(paths[-1]))
    rows = ctx.run_cases("topology", [{"fabric": p} for p in paths])
    require_success(rows, lambda i: f"fabric {paths[i]}")
    for path, f, r in zip(paths, fabrics, rows):
        conf = ctx.out(os.path.basename(path).replace(".fabric", ".topology.conf"))
        with open(conf, "w", encoding="utf-8") as out:
            out.write(r["topology"])
        try:
            parsed = model.parse_topology(r["topology"])
        except model.TopologyError as e:
            raise CheckFailed(f"fabric {path}: your topology.conf is not valid", expected=
                              "lines SwitchName=... Nodes=... or SwitchName=... Switches=...",
                              found=str(e), details=f"your file: {conf}") from None
        problems = model.compare_topology(parsed, f)
        if problems:
            raise CheckFailed(f"fabric {path}: your topology.conf differs from the fabric",
                              expected="every switch with exactly its children",
                              found=problems[0], details="\n".join(problems[1:6]) +
                              f"\nyour file: {conf}")


# --- 3. the policy, replayed --------------------------------------------------------------------

@lab.check("sim.replay", "Replay fresh and recorded job traces on three fabrics", points=0,
           backend="sim", timeout=150)
def sim_replay(ctx):
    seed = seed_of("COMMLAB_LAB19_SEED")
    ctx.log(f"fresh traces from seed {seed} (rerun them with COMMLAB_LAB19_SEED={seed})")
    rng = random.Random(seed)
    cases, keys = [], []
    for name in FABRICS:
        nodes = len(read_fabric(fabric_path(ctx, name))["nodes"])
        traces = [("recorded", data(ctx, "traces", name + ".csv"))]
        for k in range(FRESH_TRACES):
            fresh = ctx.out(f"{name}-fresh{k}.csv")
            model.write_trace(model.trace(rng, FRESH_HOURS, nodes * 8, FRESH_LOAD), fresh,
                              f"fresh trace {k}, seed {seed}")
            traces.append((f"fresh{k}", fresh))
        for kind, trace in traces:
            for policy in ("student", "firstfit"):
                cases.append({"fabric": fabric_path(ctx, name), "trace": trace, "policy": policy})
                keys.append((name, kind, policy))
    rows = ctx.run_cases("replay", cases, timeout=130)
    results = {}
    for key, row in zip(keys, rows):
        if row.get("status", "success") != "success" or "slowdown" not in row:
            raise CheckFailed(f"{key[0]}, {key[1]} trace: the replay stopped",
                              expected="a valid placement for every job",
                              found=f"{row.get('status')}: {row.get('error', '')}")
        results[key] = row
    for name in FABRICS:
        for policy in ("student", "firstfit"):
            runs = [results[(name, f"fresh{k}", policy)] for k in range(FRESH_TRACES)]
            results[(name, "fresh", policy)] = {m: sum(r[m] for r in runs) / len(runs)
                                                for m in METRICS}
    with open(data(ctx, "reference.json"), encoding="utf-8") as f:
        reference = json.load(f)
    name = "su-100"
    ctx.plot("lab19-frag", {
        "yours": list(zip([t / 3600 for t in results[(name, "fresh0", "student")]["tl_t"]],
                          results[(name, "fresh0", "student")]["tl_frag"])),
        "first fit": list(zip([t / 3600 for t in results[(name, "fresh0", "firstfit")]["tl_t"]],
                              results[(name, "fresh0", "firstfit")]["tl_frag"]))},
        xlabel="hours", ylabel="idle GPUs the next job could not use", logx=False,
        title=f"lab19: fragmentation over time ({name}, a fresh trace)")
    return results, reference


def score(ctx, results, reference, metric, what, vs_first_fit, vs_reference, ff_metric=None,
          ff_what=None):
    """One fraction per fabric against first fit on the fresh traces (their mean of ff_metric,
    by default the same metric), one against the reference on the recorded trace; each vs_*
    maps (yours, theirs) to a fraction of the points."""
    ff_metric, ff_what = ff_metric or metric, ff_what or what
    for name in FABRICS:
        you, ff = results[(name, "fresh", "student")], results[(name, "fresh", "firstfit")]
        frac = round(vs_first_fit(you[ff_metric], ff[ff_metric]), 4)
        ctx.perf_fractions.append(frac)
        ctx.perf_messages.append(f"{name}, mean of {FRESH_TRACES} fresh traces: {ff_what} "
                                 f"{you[ff_metric]:.3f}, first fit {ff[ff_metric]:.3f}: "
                                 f"{frac:.2f}")
        you, ref = results[(name, "recorded", "student")], reference[name]
        frac = round(vs_reference(you[metric], ref[metric]), 4)
        ctx.perf_fractions.append(frac)
        ctx.perf_messages.append(f"{name}, recorded trace: {what} {you[metric]:.3f}, reference "
                                 f"{ref[metric]:.3f}: {frac:.2f}")
        ctx.log(ctx.perf_messages[-2])
        ctx.log(ctx.perf_messages[-1])


@lab.check("sim.spans", "Fewest switches: leaf switches spanned, vs first fit and the reference",
           points=20, backend="sim", kind="decision", parent="sim.replay")
def sim_spans(ctx, data):
    results, reference = data
    # Against first fit: the leaves a job spans beyond the fewest that the idle nodes allowed
    # when it started (60% of first fit's excess gone: none; 90%: full). Against the reference:
    # beyond the fewest its size needs, on the same recorded trace.
    score(ctx, results, reference, "spread", "extra leaves per job (GPU-time weighted)",
          lambda you, ff: ramp(1 - you / ff, 0.6, 0.9) if ff > 0 else 1.0,
          lambda you, ref: ramp((ref + 0.05) / (you + 0.05), 0.6, 0.85),
          ff_metric="excess", ff_what="extra leaves beyond what the idle nodes allowed")


@lab.check("sim.comm", "Communication time: all-to-all slowdown on oversubscribed uplinks",
           points=25, backend="sim", kind="decision", parent="sim.replay")
def sim_comm(ctx, data):
    results, reference = data
    # Slowdowns above 1, as first fit's excess: at most half of it for full points, 90% or
    # more for none. A slowdown within 5% is full points whatever first fit did: where first
    # fit itself is barely slowed, a good placement's few percent can be a large share of
    # its excess (the reference reached 42% of first fit's 1.096 on one draw in 25).
    score(ctx, results, reference, "slowdown", "communication slowdown",
          lambda you, ff: 1.0 if you <= 1.05
          else ramp(1 - (you - 1) / (ff - 1), 0.1, 0.5) if ff > 1.02
          else (1.0 if you <= ff + 0.01 else 0.0),
          lambda you, ref: ramp((ref - 0.95) / (you - 0.95), 0.6, 0.85))


@lab.check("sim.frag", "Fragmentation over time: idle GPUs the next job could not use",
           points=20, backend="sim", kind="decision", parent="sim.replay")
def sim_frag(ctx, data):
    results, reference = data
    # Against first fit: its fragmentation over yours, on the mean of the fresh traces. Full
    # points from 0.8, none at 0.6: a quarter more fragmentation than first fit costs points.
    # Over 100 seeds (scripts/lab19_fresh_survey.py) the reference's ratio had a geometric mean
    # of 1.17-1.20 per fabric, a spread of its log of 0.07-0.08 and a lowest of 0.96, so 0.8
    # is about five spreads below. Worst fit's ratio (30 seeds) had a geometric mean of 0.38-0.41
    # and a highest of 0.64.
    score(ctx, results, reference, "frag", "fragmentation",
          lambda you, ff: ramp(ff / you if you > 0 else 2, 0.6, 0.8),
          lambda you, ref: ramp(ref / you if you > 0 else 2, 0.85, 0.97))


# --- the handout's questions ----------------------------------------------------------------

def uplink_load(n, k):
    """The all-to-all load, in units of node_gbps, on the uplink of a subtree holding k of a
    job's n nodes: every node sends node_gbps spread evenly over the n-1 others."""
    return k * (n - k) / (n - 1)


@lab.check("sim.answers", "思考: uplink loads of a split job, first fit's spread (answers.txt)",
           points=10, backend="sim", kind="question", parent="sim.replay")
def sim_answers(ctx, data):
    results, _ = data
    given = answers.read_answers(ctx)
    checks = [
        answers.check_answer(given, key, lambda v, w=want: abs(v - w) <= 0.01 + 1e-9,
                             f"{want:.3f} (within 0.01)", number=True)
        for key, want in (("uplink_8_8", uplink_load(16, 8)), ("uplink_15_1", uplink_load(16, 1)))]
    # First fit on the recorded traces is the harness's own policy: the same replay the
    # student runs with policy=firstfit.
    for key, name in (("firstfit_spread_leafspine", "leafspine-128"),
                      ("firstfit_spread_su100", "su-100")):
        want = results[(name, "recorded", "firstfit")]["spread"]
        checks.append(answers.check_answer(
            given, key, lambda v, w=want: abs(v - w) <= max(0.01, 0.02 * w) + 1e-9,
            f"{want:.3f} (within 2%)", number=True))
    answers.score_answers(ctx, checks)
