"""lab30: the future: torus fabrics, in-network reduction, AllReduce at 1K to 32K GPUs.

The student's torus AllReduce (dimension-wise rings) runs on the simulator, checked exactly
and message by message (every transfer to a torus neighbour, 2(k-1) per dimension). The
student's algorithm choice is scored at fresh points (1K to 32K GPUs, 32 KiB to 16 GiB) on
four fabrics: a point is right when the chosen algorithm's time is within 5% of the best
algorithm's there. Switched fabrics are the simulator's DGX H100 rail fabric; the torus and
the switches' reduction (SHARP) are the handout's formulas (the simulator has neither).
"""

import random

from gradelib import CheckFailed, Lab
from gradelib import answers
from gradelib.collectives import verify_collective

lab = Lab("lab30", title="未来趋势: torus、网内归约与 32K GPU 的 AllReduce", program="lab30")

FABRICS = ("superpod", "superpod-sharp", "torus2d", "torus3d")
ALGOS = ("ring", "tree", "nvlstree", "nvls", "torus")
SIM_RANKS = (4, 6, 12, 16, 27)
GPUS = (1024, 2048, 4096, 8192, 16384, 32768)
PLOT_GPUS = (1024, 4096, 32768)
WITHIN = 1.05


# --- 1. the torus AllReduce -----------------------------------------------------------------

@lab.check("sim.verify", "Torus AllReduce verified on the simulator (4 to 27 ranks)", points=0,
           backend="sim", timeout=90)
def sim_verify(ctx):
    return {n: ctx.run_lab("verify", ranks=n, backend="sim", timeout=40) for n in SIM_RANKS}


@lab.check("sim.torus", "Dimension-wise rings: exact, every message to a torus neighbour",
           points=30, backend="sim", parent="sim.verify")
def sim_torus(ctx, results):
    verify_collective(results, "torus")


# --- 2. the algorithm of each fabric and size --------------------------------------------------

def fresh_points(rng):
    """Three job sizes (1-4K, 8-16K and 32K GPUs), each with a small (32 KiB-1 MiB), a
    middle (1-256 MiB) and a large (1-16 GiB) message, drawn afresh."""
    out = []
    for g in (rng.choice(GPUS[:3]), rng.choice(GPUS[3:5]), GPUS[5]):
        for lo, hi in ((15, 20), (20, 28), (30, 34)):
            out.append((g, int(2 ** rng.uniform(lo, hi))))
    return out


def times(row, i):
    return {a: row[f"t_{a}"][i] for a in ALGOS if f"t_{a}" in row}


@lab.check("sim.choice", "Algorithm within 5% of the best at 1K-32K GPUs on four fabrics",
           points=50, backend="sim", kind="decision", timeout=120)
def sim_choice(ctx):
    points = ctx.sanitizer_subset(fresh_points(random.Random()), 3)
    text = ",".join(f"{g}:{b}" for g, b in points)
    rows = ctx.run_cases("choose", [{"fabric": f, "points": text} for f in FABRICS],
                         timeout=100)
    for f, row in zip(FABRICS, rows):
        if row["status"] != "success":
            raise CheckFailed(f"{f}: lab30_choose failed", expected="success",
                              found=f"{row['status']}: {row.get('error', '')}")
        right = 0
        for i, (g, b) in enumerate(points):
            t, mine, best = times(row, i), row["mine_s"][i], row["best_s"][i]
            ok = 0 < mine <= best * WITHIN
            right += ok
            name = ALGOS[row["algo"][i]] if 0 <= row["algo"][i] < len(ALGOS) else "none"
            fastest = min(t, key=t.get)
            ctx.log(f"{f} {g} GPUs {b} B: yours {name}, fastest {fastest} "
                    f"({'right' if ok else 'wrong'}; " +
                    ", ".join(f"{a} {v * 1e3:.3f} ms" for a, v in t.items()) + ")")
        share = right / len(points)
        ctx.perf_fractions.append(round(share, 4))
        ctx.perf_messages.append(f"{f}: {right}/{len(points)} points within 5% of the best")
        ctx.log(ctx.perf_messages[-1])
    ctx.metric("points", len(points))


# --- 3. the picture and the questions ----------------------------------------------------------

@lab.check("sim.answers", "思考: the fabrics at 32K GPUs", points=20, backend="sim",
           kind="question", timeout=120)
def sim_answers(ctx):
    pts = [(g, b) for g in PLOT_GPUS for b in (65536, 1 << 30)]
    text = ",".join(f"{g}:{b}" for g, b in pts)
    rows = ctx.run_cases("table", [{"fabric": f, "points": text} for f in FABRICS],
                         name="table", timeout=100)
    series, busbw = {}, {}
    for f, row in zip(FABRICS, rows):
        for i, (g, b) in enumerate(pts):
            bw = 2 * (g - 1) / g * b / row["best_s"][i] / 1e9
            busbw[(f, g, b)] = bw
            if b == 1 << 30:
                series.setdefault(f, []).append((g, bw))
    ctx.plot("lab30-busbw", series, xlabel="GPUs", ylabel="AllReduce busbw, 1 GiB (GB/s)",
             logx=True, title="lab30: the best algorithm of each fabric")
    big = PLOT_GPUS[-1]
    top = max(FABRICS, key=lambda f: busbw[(f, big, 1 << 30)])
    t3 = times(rows[FABRICS.index("torus3d")], pts.index((big, 65536)))
    speedup = t3["ring"] / t3["torus"]
    ctx.log(f"{big} GPUs, 1 GiB: " + ", ".join(f"{f} {busbw[(f, big, 1 << 30)]:.0f} GB/s"
                                               for f in FABRICS))
    ctx.log(f"torus3d, {big} GPUs, 64 KiB: ring / torus = {speedup:.1f}")
    given = answers.read_answers(ctx)
    answers.score_answers(ctx, [
        answers.check_answer(given, "fastest_fabric_32k_1g", lambda v: v.lower() == top,
                             f"{top} (the fabric with the highest busbw at {big} GPUs, 1 GiB)"),
        answers.check_answer(given, "torus_speedup_32k_64k",
                             lambda v: abs(v - speedup) <= 0.05 * speedup,
                             f"{speedup:.1f} (ring time / torus time on torus3d, {big} GPUs, "
                             "64 KiB; within 5%)", number=True),
    ])

