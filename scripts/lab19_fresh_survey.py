#!/usr/bin/python3
"""lab19_fresh_survey.py: how a lab19 program scores against first fit over many fresh traces.

lab19's grader draws fresh job traces every run, so its thresholds against first fit must hold
for every draw, not for the one that was tried. This runs the grader's own sim.replay and its
three scored checks once per seed, and prints, per fabric, the spread of the fragmentation
ratio over first fit and how many seeds lost points on each check.

    make solution-lab19
    python3 scripts/lab19_fresh_survey.py build/solutions/lab19/lab19 --seeds 100
    python3 scripts/lab19_fresh_survey.py build/solutions/lab19/lab19 --seeds 300 --traces 1
"""
import argparse
import math
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "grader"))
sys.path.insert(0, os.path.join(ROOT, "grader", "labs"))
from gradelib.context import Context  # noqa: E402
import lab19 as grader  # noqa: E402

SCORED = ("sim.spans", "sim.comm", "sim.frag")


def grade_seed(program, seed, report_dir):
    """The replay's results and each scored check's lowest fraction, for one seed."""
    os.environ["COMMLAB_LAB19_SEED"] = str(seed)

    def context(check_id):
        return Context(grader.lab, grader.lab.get(check_id), ROOT, os.path.abspath(program),
                       report_dir, solution=True)

    replay = context("sim.replay")
    data = replay.check.func(replay)
    lowest = {}
    for check_id in SCORED:
        ctx = context(check_id)
        ctx.check.func(ctx, data)
        lowest[check_id] = min(ctx.perf_fractions)
    return data[0], lowest


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", help="a lab19 program, e.g. build/solutions/lab19/lab19")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--traces", type=int, default=grader.FRESH_TRACES,
                    help="fresh traces per fabric (the grader's number by default)")
    args = ap.parse_args()
    grader.FRESH_TRACES = args.traces
    ratios = {name: [] for name in grader.FABRICS}
    lost = dict.fromkeys(SCORED, 0)
    with tempfile.TemporaryDirectory(prefix="commlab-lab19-survey-") as tmp:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            results, lowest = grade_seed(args.program, seed, tmp)
            for name in grader.FABRICS:
                you, ff = results[(name, "fresh", "student")], results[(name, "fresh", "firstfit")]
                ratios[name].append(ff["frag"] / you["frag"] if you["frag"] > 0 else 2.0)
            for check, frac in lowest.items():
                lost[check] += frac < 1
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
