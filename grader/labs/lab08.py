"""lab08: 16 GPUs and NVSwitch: calibrating a tuning table from nccl-tests sweeps.

The student's program gets the fitting points of real nccl-tests AllReduce sweeps
(datasets/nccl-tests, one sweep per NCCL_ALGO / NCCL_PROTO setting) and returns an
alpha-beta fit per sweep and a size -> setting table per machine. It has no
simulator, no dataset and no measurement to look up: the held-out points live only
here. The grader fits every sweep again (relative least squares, written from the
handout), and scores the student's fits and table on the held-out measured points.
On a machine with GPUs it sweeps every setting NCCL accepts there (no NVLS without
NVSwitch: NCCL refuses it), lets the student's code fit them and build the table,
and races the table's forced settings against NCCL's own tuner.
"""

import csv
import math
import os
import random

from gradelib import CheckFailed, CheckSkipped, Lab, expect, expect_close, perf_ratio, perf_samples
from gradelib.answers import check_answer, read_answers, score_answers

lab = Lab("lab08", title="16 卡与 NVSwitch: 从 nccl-tests 扫描标定调优表", program="lab08",
          student_files=["labs/lab08/lab08.c", "labs/lab08/answers.txt"])

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "datasets", "nccl-tests")
MAX_BYTES = 4294967295
# Machines whose sweeps are fitted; those with several settings also get a table.
MACHINES = ["l40s-2gpu", "l40s-4gpu", "nd-a100-v4", "nd-h200-v5"]
# A fit may be this much worse than the grader's relative least squares on held-out points
# (mean |log(predicted / measured)|): other sensible methods land inside it.
FIT_SLACK_REL, FIT_SLACK_ABS = 1.10, 0.01


# --- the data and the model, written again from the handout --------------------------------

def _rows(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def load():
    """{machine: [(sweep, setting), ...]}, {sweep: fit points}, {sweep: held-out points}."""
    machines, fit, held = {}, {}, {}
    for r in _rows("sweeps.csv"):
        name = "/".join(x for x in (r["NCCL_ALGO"], r["NCCL_PROTO"]) if x) or "default"
        machines.setdefault(r["system"], []).append((r["sweep"], name))
    for name, out in (("fit.csv", fit), ("heldout.csv", held)):
        for r in _rows(name):
            out.setdefault(r["sweep"], []).append((float(r["bytes"]), float(r["time_us"])))
    return machines, fit, held


def relative_fit(points):
    """alpha (us), bw (GB/s) minimising sum(((alpha + S/bw) / t - 1)^2)."""
    w0 = w1 = w2 = r0 = r1 = 0.0
    for s, t in points:
        w = 1.0 / (t * t)
        w0, w1, w2, r0, r1 = w0 + w, w1 + w * s, w2 + w * s * s, r0 + w * t, r1 + w * s * t
    det = w0 * w2 - w1 * w1
    alpha, g = (r0 * w2 - r1 * w1) / det, (w0 * r1 - w1 * r0) / det
    return alpha, 1e-3 / g


def predict(alpha, bw, s):
    return alpha + s / (bw * 1e3)


def log_error(alpha, bw, points):
    """Mean |log(predicted / measured)|; infinite when a prediction is not positive."""
    total = 0.0
    for s, t in points:
        p = predict(alpha, bw, s)
        if not (p > 0 and math.isfinite(p)):
            return math.inf
        total += abs(math.log(p / t))
    return total / len(points)


def parse_table(text):
    """'LO-HI:X;...' -> [(lo, hi, X)]."""
    out = []
    for part in filter(None, text.split(";")):
        span, _, what = part.partition(":")
        lo, _, hi = span.partition("-")
        out.append((int(lo), int(hi), what))
    return out


def choice(table, size):
    return next(x for lo, hi, x in table if lo <= size <= hi)


def points_arg(points):
    return ",".join(f"{int(s)}:{t!r}" for s, t in points)


# --- fit --------------------------------------------------------------------------------------

def noisy_sweep(rng, alpha, bw, noise, tilt=False):
    """8 B .. 1 GiB with uniform log-noise. tilt: the two largest fitting points (the even
    indices are fitted) get the noise's full size in opposite directions, so a fit that
    weighs absolute errors puts alpha far off, always rather than on most draws."""
    sizes = [8 * 2 ** k for k in range(28)]
    out = [(s, predict(alpha, bw, s) * math.exp(rng.uniform(-noise, noise))) for s in sizes]
    if tilt:
        sign = rng.choice((-1.0, 1.0))
        for i, direction in ((-4, sign), (-2, -sign)):
            out[i] = (out[i][0], predict(alpha, bw, out[i][0]) * math.exp(direction * noise))
    return out


@lab.check("cpu.fit", "Fit latency and bandwidth to a sweep", points=20, timeout=60)
def cpu_fit(ctx):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    ctx.log(f"synthetic sweeps from seed {seed}")
    exact = [(rng.uniform(3, 60), rng.uniform(2, 500)) for _ in range(3)]
    # The last noisy sweep is slow (PCIe-like) and tilted at its large end.
    noisy = [(rng.uniform(3, 60), rng.uniform(2, hi)) for hi in (500, 500, 500, 50)]
    cases = [{"points": points_arg(noisy_sweep(rng, a, b, 0.0))} for a, b in exact]
    sweeps = [noisy_sweep(rng, a, b, 0.05, tilt=(k == 3)) for k, (a, b) in enumerate(noisy)]
    cases += [{"points": points_arg(p[::2])} for p in sweeps]
    bad = [{"points": "1024:10"}, {"points": "4096:10,4096:12,4096:11"},
           {"points": "8:10,1024:0,65536:40"}, {"points": "8:20,1048576:20,8388608:19"}]
    rows = ctx.run_cases("fit", cases + bad)
    for i, (a, b) in enumerate(exact):
        expect(f"exact line {i}: status", rows[i]["status"], "success")
        expect_close(f"exact line {i} (alpha {a:.3f} us, {b:.2f} GB/s): alpha_us",
                     rows[i]["alpha_us"], a, rel=1e-6)
        expect_close(f"exact line {i}: bw_gbps", rows[i]["bw_gbps"], b, rel=1e-6)
    worst = 0.0
    for k, p in enumerate(sweeps):
        row = rows[len(exact) + k]
        expect(f"noisy sweep {k}: status", row["status"], "success")
        fit_pts, held = p[::2], p[1::2]
        ref = log_error(*relative_fit(fit_pts), held)
        mine = log_error(row["alpha_us"], row["bw_gbps"], held)
        worst = max(worst, mine - ref)
        if not mine <= FIT_SLACK_REL * ref + FIT_SLACK_ABS:
            raise CheckFailed(f"noisy sweep {k} (5% noise, 8 B to 1 GiB): your fit predicts the "
                              f"other sizes badly",
                              expected=f"mean |log(pred/measured)| <= {FIT_SLACK_REL:g} x "
                                       f"{ref:.4f} + {FIT_SLACK_ABS:g}",
                              found=f"{mine:.4f} (alpha {row['alpha_us']:.4g} us, "
                                    f"{row['bw_gbps']:.4g} GB/s)")
    ctx.metric("worst_excess_log_error", worst)
    for case, row in zip(bad, rows[-len(bad):]):
        expect(f"status for points={case['points']}", row["status"], "invalid argument")


# --- the recorded sweeps -------------------------------------------------------------------------

@lab.check("cpu.calibrate", "Fits and tables of the recorded sweeps run", points=0, timeout=90)
def cpu_calibrate(ctx):
    return {m: ctx.run_lab("calibrate", ["--machine", m], backend="cpu", name=f"{m}.json")
            for m in MACHINES}


@lab.check("cpu.heldout", "Your fits predict the held-out points", points=25,
           parent="cpu.calibrate")
def cpu_heldout(ctx, runs):
    machines, fit, held = load()
    errors, series = {}, {}
    for m in MACHINES:
        rows = {r["sweep"]: r for r in runs[m]["rows"]}
        for sweep, name in machines[m]:
            r = rows.get(sweep)
            if r is None:
                raise CheckFailed(f"{m}: no fit of {sweep}", expected="one row per sweep",
                                  found="missing")
            expect(f"{sweep}: status of your fit", r["status"], "success")
            ref = log_error(*relative_fit(fit[sweep]), held[sweep])
            mine = log_error(r["alpha_us"], r["bw_gbps"], held[sweep])
            errors[sweep] = mine
            if not mine <= FIT_SLACK_REL * ref + FIT_SLACK_ABS:
                raise CheckFailed(f"{sweep}: your fit predicts its held-out sizes badly",
                                  expected=f"mean |log(pred/measured)| <= {FIT_SLACK_REL:g} x "
                                           f"{ref:.4f} + {FIT_SLACK_ABS:g}",
                                  found=f"{mine:.4f} (alpha {r['alpha_us']:.4g} us, "
                                        f"{r['bw_gbps']:.4g} GB/s)")
            if m == "l40s-4gpu":
                pts = sorted(fit[sweep] + held[sweep])
                series[f"{name} measured"] = [(s, t) for s, t in pts]
                series[f"{name} your fit"] = [(s, predict(r["alpha_us"], r["bw_gbps"], s))
                                              for s, _ in pts]
    ctx.metric("mean_log_error", errors)
    ctx.plot("lab08-l40s-4gpu", series, xlabel="AllReduce size per rank (bytes)",
             ylabel="time (us)", logy=True, title="lab08: 4x L40S, measured and fitted")


@lab.check("cpu.table", "The table covers every size and follows your models", points=15,
           timeout=60)
def cpu_table(ctx):
    rng = random.Random()
    # One setting; one that wins everywhere; two lines that cross; three that take turns.
    cases = [dict(fits="20:10", max_bytes=MAX_BYTES),
             dict(fits="30:5,20:10,25:8", max_bytes=MAX_BYTES),
             dict(fits="10:2,40:20", max_bytes=1 << 20)]
    a1, a2, a3 = rng.uniform(5, 12), rng.uniform(15, 25), rng.uniform(30, 45)
    b1, b2, b3 = rng.uniform(3, 6), rng.uniform(8, 12), rng.uniform(14, 20)
    cases.append(dict(fits=f"{a3!r}:{b3!r},{a1!r}:{b1!r},{a2!r}:{b2!r}", max_bytes=MAX_BYTES))
    rows = ctx.run_cases("table", cases + [dict(fits="", max_bytes=100)])
    for i, (case, row) in enumerate(zip(cases, rows)):
        expect(f"table {i} ({case['fits']}): status", row["status"], "success")
        expect(f"table {i}: rows cover 0..{case['max_bytes']} in order", row["table_error"], "")
        fits = [tuple(map(float, f.split(":"))) for f in case["fits"].split(",")]
        table = [(lo, hi, int(x)) for lo, hi, x in parse_table(row["table"])]
        sizes = sorted({int(2 ** rng.uniform(0, math.log2(case["max_bytes"]))) for _ in range(300)}
                       | {0, case["max_bytes"]})
        for s in sizes:
            times = [predict(a, b, s) for a, b in fits]
            mine = times[choice(table, s)]
            if mine > min(times) * 1.02:     # near a crossing either side is right
                raise CheckFailed(f"table {i}: at {s} B the table runs a slower setting of the "
                                  f"models it was given", expected=f"{min(times):.4g} us",
                                  found=f"setting #{choice(table, s)}: {mine:.4g} us")
    expect("status for no settings", rows[-1]["status"], "invalid argument")


@lab.check("cpu.tune", "Tables within 5% of the best measured setting per size", points=30,
           kind="decision", parent="cpu.calibrate")
def cpu_tune(ctx, runs):
    machines, _, held = load()
    for m in MACHINES:
        if len(machines[m]) < 2:
            continue
        text, why = runs[m]["table"], runs[m]["table_error"]
        if why or not text:
            raise CheckFailed(f"{m}: no valid table", expected="a table", found=why or "empty")
        table = parse_table(text)
        measured = {sweep: dict(held[sweep]) for sweep, _ in machines[m]}
        sizes = sorted(set.intersection(*(set(v) for v in measured.values())))
        ratios = []
        for s in sizes:
            best = min(v[s] for v in measured.values())
            ratios.append(best / measured[choice(table, int(s))][s])
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = min(zip(ratios, sizes))
        ctx.log(f"{m}: geometric mean best/chosen {gm:.3f}, worst {worst[0]:.3f} at "
                f"{int(worst[1])} B")
        perf_ratio(ctx, student=lambda: gm, baseline=lambda: 1.0, repeats=1, low=0.85, high=0.95,
                   unit="x best", name=f"{m} held-out sizes")


@lab.check("cpu.answers", "Answers: the LL/Simple crossover, where it moves, ring steps",
           points=10, kind="question", parent="cpu.calibrate")
def cpu_answers(ctx, runs):
    ans = read_answers(ctx)
    rows = {r["sweep"]: r for r in runs["l40s-2gpu"]["rows"]}
    ll, simple = rows["l40s-2gpu-ll"], rows["l40s-2gpu-simple"]
    g = [1.0 / (r["bw_gbps"] * 1e3) for r in (ll, simple)]
    want = (simple["alpha_us"] - ll["alpha_us"]) / (g[0] - g[1])
    ctx.metric("crossover_from_your_fits", want)
    score_answers(ctx, [
        check_answer(ans, "l40s_2gpu_ll_simple_crossover_bytes",
                     lambda v: abs(v - want) <= 0.2 * abs(want),
                     f"{want:.0f} from your fits, within 20%", number=True),
        check_answer(ans, "nvlink_crossover_moves", lambda v: v.lower() == "larger", "larger"),
        check_answer(ans, "dgx2_ring_allreduce_steps", lambda v: v == 2 * (16 - 1),
                     str(2 * (16 - 1)), number=True)])


# --- a real machine ----------------------------------------------------------------------------

GPU_SETTINGS = [("Ring", "LL"), ("Ring", "LL128"), ("Ring", "Simple"), ("Tree", "LL"),
                ("Tree", "LL128"), ("Tree", "Simple"), ("NVLS", "Simple")]
GPU_FIT_SIZES = [8 * 8 ** k for k in range(9)]              # 8 B .. 128 MiB
GPU_HELD_SIZES = [64 << 10, 1 << 20, 16 << 20, 128 << 20]


def gpu_sweep(ctx, ngpus, sizes, env, name):
    data = ctx.run_lab("sweep", ["--sizes", ",".join(map(str, sizes)), "--repeats", "3"],
                       ranks=ngpus, backend="gpu", env=env, name=name, timeout=120)
    for r in data["rows"]:
        if r["#wrong"]:
            raise CheckFailed(f"NCCL's AllReduce gave {r['#wrong']} wrong elements at "
                              f"{r['size']} B with {env or 'its own choice'}",
                              expected="0", found=str(r["#wrong"]))
    return {r["size"]: sorted(r["time_us"])[len(r["time_us"]) // 2] for r in data["rows"]}


@lab.check("gpu.table", "This machine: your table forced vs NCCL's own tuner", points=10,
           backend="gpu", kind="performance", needs={"gpus": 2}, timeout=600)
def gpu_table(ctx):
    ngpus = ctx.resources.get("gpus", 2)
    usable, fits = [], []
    for algo, proto in GPU_SETTINGS:
        env = {"NCCL_ALGO": algo, "NCCL_PROTO": proto}
        try:
            times = gpu_sweep(ctx, ngpus, GPU_FIT_SIZES, env, f"fit-{algo}-{proto}.json")
        except CheckSkipped as e:       # NCCL refuses what this machine cannot run
            ctx.log(f"{algo}/{proto}: not run here ({e})")
            continue
        usable.append(env)
        fits.append({"points": points_arg(sorted(times.items()))})
    if len(usable) < 2:
        ctx.skip(f"needs two NCCL settings that run here (found {len(usable)})")
    rows = ctx.run_cases("fit", fits)
    for env, row in zip(usable, rows):
        expect(f"status of your fit of {env['NCCL_ALGO']}/{env['NCCL_PROTO']}", row["status"],
               "success")
    arg = ",".join(f"{r['alpha_us']!r}:{r['bw_gbps']!r}" for r in rows)
    table = ctx.run_cases("table", [dict(fits=arg, max_bytes=MAX_BYTES)], name="gpu-table")[0]
    expect("your table for this machine", table["table_error"], "")
    pick = {s: usable[int(choice(parse_table(table["table"]), s))] for s in GPU_HELD_SIZES}
    mine, base = [], []
    for rnd in range(3):
        default = gpu_sweep(ctx, ngpus, GPU_HELD_SIZES, {}, f"default-{rnd}.json")
        forced = {}
        for env in {tuple(sorted(e.items())) for e in pick.values()}:
            sizes = [s for s in GPU_HELD_SIZES if tuple(sorted(pick[s].items())) == env]
            forced.update(gpu_sweep(ctx, ngpus, sizes, dict(env), f"forced-{rnd}.json"))
        for s in GPU_HELD_SIZES:
            mine.append(s / forced[s] / 1e3)
            base.append(s / default[s] / 1e3)
    perf_samples(ctx, student=mine, baseline=base, low=0.80, high=0.95, unit="GB/s",
                 name="algbw with your table's settings forced vs NCCL's tuner")
