"""lab28: a diagnoser of NCCL jobs.

The student's lab28_diagnose() reads a job's bundle (each node's NCCL_DEBUG=INFO log,
environment, nvidia-smi topo -m and ibstat) and names every fault once, with its fix. It runs
on the shipped examples, on bundles generated afresh with faults injected (scored on
precision and recall, and on whether each fix names the setting or tool that fixes it), and
on bundles the grader holds and never ships (grader/labs/lab28_hidden, listed in
.release-exclude).
"""

import glob
import os
import random
import sys

from gradelib import CheckFailed, Lab

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _lab28_model as model  # noqa: E402  (the grader's model of a job's bundle)

lab = Lab("lab28", title="故障排查：从 NCCL 日志、拓扑、环境与 ibstat 找出故障与修复", program="lab28")

HIDDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab28_hidden")
GENERATED = 40


def ramp(x, zero, full):
    return max(0.0, min(1.0, (x - zero) / (full - zero)))


def findings_of(row):
    out = []
    for line in row.get("findings", "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            out.append({"code": parts[0], "node": parts[1], "fix": parts[2]})
        elif line.strip():
            out.append({"code": "?", "node": "?", "fix": line})
    return out


def diagnose(ctx, paths, tag):
    rows = ctx.run_cases("diagnose", [{"bundle": p} for p in paths], name=f"diagnose-{tag}")
    for p, r in zip(paths, rows):
        if r.get("status") != "success":
            raise CheckFailed(f"{tag} bundle {p}: your lab28_diagnose failed",
                              expected="success", found=f"{r.get('status')}: {r.get('error', '')}")
    return [findings_of(r) for r in rows]


def tally(truths, results):
    tp = fp = fn = 0
    misses, extras = [], []
    for i, (want, found) in enumerate(zip(truths, results)):
        got = {f["code"] for f in found}
        want = set(want)
        tp += len(want & got)
        fp += len(got - want)
        fn += len(want - got)
        misses += [(i, c) for c in sorted(want - got)]
        extras += [(i, c) for c in sorted(got - want)]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, misses, extras


def show(items, n=6):
    return "; ".join(f"bundle {i}: {c}" for i, c in items[:n]) + (" ..." if len(items) > n else "")


def read_truth(path):
    with open(path, encoding="utf-8") as f:
        return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]


# --- the shipped examples ------------------------------------------------------------------------

@lab.check("cpu.examples", "The shipped example jobs: exactly their faults", points=10,
           backend="cpu")
def cpu_examples(ctx):
    folder = os.path.join(ctx.root, "datasets", "lab28", "examples")
    paths = sorted(glob.glob(os.path.join(folder, "*.txt")))
    if not paths:
        raise CheckFailed("no example bundles", expected=f"{folder}/*.txt", found="none")
    truths = [read_truth(p[:-4] + ".faults") for p in paths]
    for p, want, found in zip(paths, truths, diagnose(ctx, paths, "example")):
        got = sorted({f["code"] for f in found})
        if got != sorted(want):
            raise CheckFailed(f"example {os.path.basename(p)}: findings differ",
                              expected=", ".join(sorted(want)) or "none",
                              found=", ".join(got) or "none")


# --- fresh bundles ------------------------------------------------------------------------------

@lab.check("cpu.generated", f"Diagnose {GENERATED} fresh jobs with faults injected", points=0,
           backend="cpu", timeout=90)
def cpu_generated(ctx):
    seed = int(os.environ.get("COMMLAB_LAB28_SEED") or random.randrange(1 << 30))
    ctx.log(f"jobs from seed {seed} (rerun them with COMMLAB_LAB28_SEED={seed})")
    states = model.generated_set(random.Random(seed), GENERATED)
    paths = []
    for i, st in enumerate(states):
        path = ctx.out(f"job-{i}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(model.render(st, seed + i))
        paths.append(path)
    results = diagnose(ctx, paths, "generated")
    truths = [model.faults(st) for st in states]
    ctx.metric("faults", sum(len(t) for t in truths))
    return truths, results


def score(ctx, value, what, detail):
    frac = ramp(value, 0.70, 0.95)
    ctx.metric(what, round(value, 4))
    ctx.perf_fractions.append(round(frac, 4))
    ctx.perf_messages.append(f"{what} {value:.3f} (full marks from 0.95, none at 0.70 or less)"
                             + (f"; {detail}" if detail else ""))


@lab.check("cpu.precision", "Precision on fresh jobs: every finding is a real fault",
           points=15, backend="cpu", kind="decision", parent="cpu.generated")
def cpu_precision(ctx, data):
    truths, results = data
    precision, _, _, extras = tally(truths, results)
    score(ctx, precision, "precision", ("not faults: " + show(extras) +
                                        f" (bundles: {ctx.out('job-N.txt')})") if extras else "")


@lab.check("cpu.recall", "Recall on fresh jobs: every fault is found", points=15,
           backend="cpu", kind="decision", parent="cpu.generated")
def cpu_recall(ctx, data):
    truths, results = data
    _, recall, misses, _ = tally(truths, results)
    score(ctx, recall, "recall", ("missed: " + show(misses) +
                                  f" (bundles: {ctx.out('job-N.txt')})") if misses else "")


@lab.check("cpu.fixes", "Each fault found comes with the fix that addresses it", points=10,
           backend="cpu", parent="cpu.generated")
def cpu_fixes(ctx, data):
    truths, results = data
    checked = 0
    for i, (want, found) in enumerate(zip(truths, results)):
        for f in found:
            if f["code"] not in want:
                continue
            words = model.FIX_WORDS[f["code"]]
            checked += 1
            if not any(w.lower() in f["fix"].lower() for w in words):
                raise CheckFailed(f"bundle {i}: the fix for {f['code']}",
                                  expected="names " + " or ".join(words),
                                  found=repr(f["fix"]))
    if not checked:
        raise CheckFailed("no fault found, so no fix to check", expected="findings",
                          found="none")


# --- the jobs the grader holds ------------------------------------------------------------------

@lab.check("cpu.hidden", "Held-back jobs: F1 of the findings (precision and recall)", points=20,
           backend="cpu", kind="decision", timeout=60)
def cpu_hidden(ctx):
    paths = sorted(glob.glob(os.path.join(HIDDEN, "*.txt")))
    if not paths:
        ctx.skip("the held-back jobs are kept by the course staff (official grading)")
    truths = [read_truth(p[:-4] + ".faults") for p in paths]
    copies = []  # the lab's program reads only the grading run's own folder
    for i, p in enumerate(paths):
        copies.append(ctx.out(f"hidden-{i}.txt"))
        with open(p, encoding="utf-8") as f, open(copies[-1], "w", encoding="utf-8") as g:
            g.write(f.read())
    results = diagnose(ctx, copies, "hidden")
    precision, recall, misses, extras = tally(truths, results)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    ctx.metric("precision", round(precision, 4))
    ctx.metric("recall", round(recall, 4))
    frac = ramp(f1, 0.60, 0.90)
    ctx.metric("f1", round(f1, 4))
    ctx.perf_fractions.append(round(frac, 4))
    ctx.perf_messages.append(f"F1 {f1:.3f} on {len(paths)} held-back jobs (precision "
                             f"{precision:.3f}, recall {recall:.3f}; full marks from 0.90, none "
                             f"at 0.60): {len(misses)} missed, {len(extras)} not faults")
