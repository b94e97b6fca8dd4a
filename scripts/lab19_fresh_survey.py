#!/usr/bin/python3
"""lab19_fresh_survey.py: how a lab19 program scores against first fit over many fresh traces.

lab19's grader draws fresh job traces every run, so its thresholds against first fit must hold
for every draw, not for the one that was tried. This draws the traces as the grader does
(FRESH_TRACES per fabric from one seed), replays them with the program's policy and with first
fit, and prints, per fabric, the spread of the fragmentation ratio and how many seeds would
lose points on each of the three checks.

    make solution-lab19
    python3 scripts/lab19_fresh_survey.py build/solutions/lab19/lab19 --seeds 100
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "grader"))
sys.path.insert(0, os.path.join(ROOT, "grader", "labs"))
import _lab19_model as model  # noqa: E402
import lab19 as grader  # noqa: E402


class Survey:
    """Stands in for the grader's context: the fractions each check would give."""

    def __init__(self):
        self.perf_fractions, self.perf_messages = [], []

    def log(self, _):
        pass


def replay(program, seed, tmp):
    """The grader's fresh results for one seed: {(fabric, "fresh", policy): means}."""
    rng = random.Random(seed)
    cases, keys = [], []
    for name in grader.FABRICS:
        fabric = os.path.join(ROOT, "datasets", "lab19", "fabrics", name + ".fabric")
        nodes = len(grader.read_fabric(fabric)["nodes"])
        for k in range(grader.FRESH_TRACES):
            path = os.path.join(tmp, f"{name}-{k}.csv")
            jobs = model.trace(rng, grader.FRESH_HOURS, nodes * 8, grader.FRESH_LOAD)
            model.write_trace(jobs, path, f"fresh trace {k}, seed {seed}")
            for policy in ("student", "firstfit"):
                cases.append(f"fabric={fabric} trace={path} policy={policy}")
                keys.append((name, policy))
    cases_path, out = os.path.join(tmp, "survey.cases"), os.path.join(tmp, "survey.json")
    with open(cases_path, "w") as f:
        f.write("\n".join(cases) + "\n")
    subprocess.run([program, "replay", "--cases", cases_path, "--json", out], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    with open(out) as f:
        rows = json.load(f)["rows"]
    results = {}
    for (name, policy), row in zip(keys, rows):
        acc = results.setdefault((name, "fresh", policy), {m: 0.0 for m in grader.METRICS})
        for m in grader.METRICS:
            acc[m] += row[m] / grader.FRESH_TRACES
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", help="a lab19 program, e.g. build/solutions/lab19/lab19")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--first-seed", type=int, default=1)
    args = ap.parse_args()
    ratios = {name: [] for name in grader.FABRICS}
    lost = {check: 0 for check in ("sim.spans", "sim.comm", "sim.frag")}
    with tempfile.TemporaryDirectory(prefix="commlab-lab19-survey-") as tmp:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            results = replay(args.program, seed, tmp)
            for name in grader.FABRICS:
                you, ff = results[(name, "fresh", "student")], results[(name, "fresh", "firstfit")]
                ratios[name].append(ff["frag"] / you["frag"] if you["frag"] > 0 else 2.0)
            # The checks themselves, on their fresh half: the recorded half, fixed traces, is
            # given the program's own results as the reference, so it scores full.
            for name in grader.FABRICS:
                results[(name, "recorded", "student")] = results[(name, "fresh", "student")]
            itself = {name: results[(name, "fresh", "student")] for name in grader.FABRICS}
            for check, fn in (("sim.spans", grader.sim_spans), ("sim.comm", grader.sim_comm),
                              ("sim.frag", grader.sim_frag)):
                ctx = Survey()
                fn(ctx, (results, itself))
                if min(ctx.perf_fractions) < 1:
                    lost[check] += 1
            print(f"seed {seed}: " + "  ".join(f"{n} {ratios[n][-1]:.3f}" for n in ratios),
                  flush=True)
    print(f"\nfirst fit's fragmentation over the program's, mean of {grader.FRESH_TRACES} "
          f"fresh traces, {args.seeds} seeds:")
    for name, r in ratios.items():
        logs = [math.log(x) for x in r]
        print(f"  {name:14s} lowest {min(r):.3f}  mean {math.exp(statistics.mean(logs)):.3f}  "
              f"spread of log {statistics.stdev(logs) if len(r) > 1 else 0:.3f}")
    print("seeds that lost points: " + ", ".join(f"{c} {n}" for c, n in lost.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
