"""lab01: why communication becomes the bottleneck (the alpha-beta model).

The grader checks the student's ping-pong against the harness's own loop in
the same run (data, one-way time, and the messages the trace shows), refits
the student's measurements itself, recomputes every step estimate with an
independent implementation of the handout's model, and scores the student's
layout choices by the step time the model gives them against the best layout.
"""

import os
import random
import statistics

from gradelib import CheckFailed, Lab, answers, expect, expect_close, perf_samples
from gradelib.perf import ramp

lab = Lab("lab01", title="通信为何成为瓶颈: alpha-beta 模型", program="lab01")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# --- the model, written again from the handout (not from the C reference) -------------

def ring_allreduce(p, nbytes, link):
    """(alpha part, beta part) of a ring AllReduce of nbytes over p ranks."""
    alpha, bw = link
    if p <= 1:
        return 0.0, 0.0
    return 2 * (p - 1) * alpha, 2 * (p - 1) / p * nbytes / bw


def estimate(case):
    """The handout's step model; None when the layout is not valid for the case."""
    g = case["gpus_per_node"]
    gpus = case["nodes"] * g
    tp, pp, dp = case["tp"], case["pp"], case["dp"]
    if tp * pp * dp != gpus or case["layers"] % pp or \
            case["global_batch"] % (case["micro_batch"] * dp):
        return None
    intra = (case["intra_alpha_s"], case["intra_bandwidth_Bps"])
    inter = (case["inter_alpha_s"], case["inter_bandwidth_Bps"])
    link = lambda span: intra if span <= g else inter
    m = case["global_batch"] // (case["micro_batch"] * dp)
    act = case["micro_batch"] * case["seq_len"] * case["hidden"] * case["bytes_per_element"]
    grads = case["params"] / (tp * pp) * case["bytes_per_element"]
    compute = 6 * case["params"] * case["global_batch"] * case["seq_len"] / (
        gpus * case["gpu_flops"])
    calls = 4 * case["layers"] / pp * m
    tp_a, tp_b = (calls * x for x in ring_allreduce(tp, act, link(tp)))
    dp_a, dp_b = ring_allreduce(dp, grads, link(tp * dp))
    pl = link(gpus)
    pp_a, pp_b = (2 * m * pl[0], 2 * m * act / pl[1]) if pp > 1 else (0.0, 0.0)
    comm = tp_a + tp_b + dp_a + dp_b + pp_a + pp_b
    step = compute + compute * (pp - 1) / m + comm
    return {"m": m, "compute_s": compute, "bubble_s": compute * (pp - 1) / m,
            "tp_alpha_s": tp_a, "tp_beta_s": tp_b, "dp_alpha_s": dp_a, "dp_beta_s": dp_b,
            "pp_alpha_s": pp_a, "pp_beta_s": pp_b, "comm_s": comm, "step_s": step,
            "share": comm / step}


def fits(case, tp, pp):
    return 16 * case["params"] / (tp * pp) <= case["mem_bytes"]


def layouts(case):
    """Every valid layout of the case's GPUs that fits in memory, with its model."""
    gpus = case["nodes"] * case["gpus_per_node"]
    powers = [1 << k for k in range(gpus.bit_length()) if (1 << k) <= gpus]
    for tp in powers:
        for pp in powers:
            if gpus % (tp * pp) or not fits(case, tp, pp):
                continue
            e = estimate(dict(case, tp=tp, pp=pp, dp=gpus // (tp * pp)))
            if e:
                yield (tp, pp, gpus // (tp * pp)), e


def best_layout(case):
    found = sorted(layouts(case), key=lambda x: x[1]["step_s"])
    return found[0] if found else (None, None)


def fit_relative(xs, ys):
    """Least squares of t = alpha + beta n with weights 1/t^2 (relative errors)."""
    w = [1 / y ** 2 for y in ys]
    sw = sum(w)
    mx = sum(wi * x for wi, x in zip(w, xs)) / sw
    my = sum(wi * y for wi, y in zip(w, ys)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(w, xs))
    sxy = sum(wi * (x - mx) * (y - my) for wi, x, y in zip(w, xs, ys))
    beta = sxy / sxx
    return my - beta * mx, beta


# --- the cases -------------------------------------------------------------------------

def read_cases(path):
    """The cases of a cases file (key=value lines, # comments) as dicts of numbers."""
    cases = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                case = {}
                for token in line.split():
                    key, value = token.split("=", 1)
                    case[key] = int(value) if value.isdigit() else float(value)
                cases.append(case)
    return cases


SCALE = read_cases(os.path.join(ROOT, "labs", "lab01", "scale.cases"))
DGX = {k: v for k, v in SCALE[0].items() if k in (
    "gpus_per_node", "mem_bytes", "intra_alpha_s", "intra_bandwidth_Bps", "inter_alpha_s",
    "inter_bandwidth_Bps")}

# GPT-3 175B (Brown et al. 2020, Table 2.1; 1536 sequences as in Narayanan et al. 2021) on
# chapter 1's 256 DGX A100 nodes with TP 8 x PP 16 x DP 16.
GPT3_175B = dict(DGX, params=175e9, bytes_per_element=2, layers=96, hidden=12288, seq_len=2048,
                 global_batch=1536, micro_batch=1, gpu_flops=156e12, nodes=256)
CHAPTER1 = dict(GPT3_175B, tp=8, pp=16, dp=16)

# Layouts where only the right link rule gives the right answer: DP inside a node only
# with the TP ranks counted (tp*dp), PP crossing nodes, TP across nodes, all in a node.
EDGE_CASES = [
    dict(CHAPTER1, nodes=4, tp=4, dp=4, pp=2, layers=32, global_batch=64),
    dict(CHAPTER1, nodes=2, tp=2, dp=2, pp=4, layers=32, global_batch=64),
    dict(CHAPTER1, nodes=4, gpus_per_node=4, tp=8, dp=2, pp=1, layers=24, global_batch=64),
    dict(CHAPTER1, nodes=1, tp=2, dp=2, pp=2, layers=24, global_batch=64),
]

# Layouts the student's estimate must refuse, and why.
INVALID = [
    ("tp*pp*dp != GPUs", dict(CHAPTER1, dp=8)),
    ("pp does not divide the layers", dict(CHAPTER1, layers=90)),
    ("micro_batch*dp does not divide the global batch", dict(CHAPTER1, global_batch=1000)),
]


def random_workload(rng):
    return dict(params=rng.choice([1.3e9, 6.7e9, 13e9, 70e9]) * rng.uniform(0.9, 1.1),
                bytes_per_element=rng.choice([2, 4]), layers=8 * rng.randint(2, 12),
                hidden=rng.choice([2048, 4096, 5120, 8192]),
                seq_len=rng.choice([1024, 2048, 4096]), global_batch=64 * rng.choice([4, 8, 16]),
                micro_batch=rng.choice([1, 2, 4]), gpu_flops=rng.uniform(80e12, 400e12))


def random_cluster(rng):
    return dict(nodes=rng.choice([1, 2, 4, 16, 64]), gpus_per_node=rng.choice([4, 8, 16]),
                mem_bytes=rng.choice([40e9, 80e9, 141e9]),
                intra_alpha_s=rng.uniform(1e-6, 6e-6), intra_bandwidth_Bps=rng.uniform(20e9, 450e9),
                inter_alpha_s=rng.uniform(3e-6, 2e-5), inter_bandwidth_Bps=rng.uniform(10e9, 50e9))


def random_estimates(rng, n):
    cases = []
    while len(cases) < n:
        case = dict(random_workload(rng), **random_cluster(rng))
        choices = [l for l, _ in layouts(dict(case, mem_bytes=1e30))]
        if choices:
            tp, pp, dp = rng.choice(choices)
            cases.append(dict(case, tp=tp, pp=pp, dp=dp))
    return cases


def random_plans(rng, n):
    cases = []
    while len(cases) < n:
        case = dict(random_workload(rng), **random_cluster(rng))
        if best_layout(case)[0]:
            cases.append(case)
    return cases


STEP_KEYS = ("m", "compute_s", "bubble_s", "tp_alpha_s", "tp_beta_s", "dp_alpha_s",
             "dp_beta_s", "pp_alpha_s", "pp_beta_s", "comm_s", "step_s", "share")


def describe(case):
    gpus = case["nodes"] * case["gpus_per_node"]
    where = f"{case['nodes']}x{case['gpus_per_node']} GPUs"
    if "tp" in case:
        where += f", tp={case['tp']} pp={case['pp']} dp={case['dp']}"
    return f"{case['params']:.3g} parameters on {where}" if gpus else where


def check_step(label, got, want):
    for key in STEP_KEYS:
        expect_close(f"{label}: {key}", got[key], want[key], rel=0.01, abs=1e-12)


# --- the ping-pong ---------------------------------------------------------------------

def median(xs):
    return statistics.median(xs)


def series(sweep, key):
    """Per size: the median of the samples in column key, in seconds for *_us columns."""
    scale = 1e-6 if key.endswith("_us") else 1.0
    return [median(r[key]) * scale for r in sweep["rows"]]


def check_transfers(sweep):
    """The data arrived whole and the messages were the loop's own."""
    bad = {r["bytes"]: r["corrupt_bytes"] for r in sweep["rows"] if r["corrupt_bytes"]}
    if bad:
        raise CheckFailed("messages arrived wrong or incomplete",
                          expected="both ranks hold rank 0's bytes after the loop",
                          found=", ".join(f"{c} bad bytes at {b} B" for b, c in bad.items()))
    off = [r["bytes"] for r in sweep["rows"] if r["messages_off"]]
    if off:
        raise CheckFailed("the loop did not send and receive one message each way per "
                          "iteration", expected="iters sends and iters receives of `bytes` "
                          "on ranks 0 and 1, nothing on the others",
                          found="other messages at " + ", ".join(f"{b} B" for b in off))


@lab.check("cpu.sweep", "Ping-pong sweep runs (2 MPI ranks)", points=0, backend="cpu",
           timeout=90)
def cpu_sweep(ctx):
    return ctx.run_lab("sweep", ["--max-bytes", "2M"], ranks=2, backend="cpu")


@lab.check("cpu.pingpong", "Ping-pong moves the data and times one way", points=15,
           backend="cpu", parent="cpu.sweep")
def cpu_pingpong(ctx, sweep):
    check_transfers(sweep)
    sizes = [r["bytes"] for r in sweep["rows"]]
    mine = series(sweep, "student_us")
    base = series(sweep, "harness_us")
    ctx.plot("lab01-pingpong", {
        "your loop": [(b, b / t / 1e9) for b, t in zip(sizes, mine) if t > 0],
        "harness loop": [(b, b / t / 1e9) for b, t in zip(sizes, base) if t > 0]},
        xlabel="message size (bytes)", ylabel="one-way bandwidth (GB/s)",
        title="lab01 ping-pong (cpu)")
    if all(t > 0 for t in mine + base):
        yours, theirs = fit_relative(sizes, mine)[0], fit_relative(sizes, base)[0]
        ctx.metric("alpha_yours_us", yours * 1e6)
        ctx.metric("alpha_harness_us", theirs * 1e6)
        ctx.log(f"alpha of your loop {yours * 1e6:.2f} us, of the harness's own loop "
                f"{theirs * 1e6:.2f} us: the crossing between your program and the harness")
    # The harness timed each call of your loop from outside: the one-way time you report
    # must agree with it (a round trip reported as one way is off by 2x). The call's time
    # holds the loop's and more, so per size the call least disturbed by the machine (the
    # highest of the paired ratios) is the one compared.
    off = [(r["bytes"], max(m / e for m, e in zip(r["student_us"], r["external_us"]) if e > 0))
           for r in sweep["rows"] if r["bytes"] >= 8192 and any(e > 0 for e in r["external_us"])]
    worst = max(off, key=lambda x: abs(x[1] - 1.0))
    ctx.metric("reported_vs_external_worst", worst[1])
    if not 0.8 <= worst[1] <= 1.25:
        raise CheckFailed("reported one-way time disagrees with the time the call took",
                          expected="reported / (call time / 2 iters) in [0.8, 1.25], for the "
                                   "call of each size that agrees best",
                          found=f"{worst[1]:.2f} at {worst[0]} B")


@lab.check("cpu.fit", "Fit alpha and beta: relative least squares on given points", points=10,
           backend="cpu")
def cpu_fit_synthetic(ctx):
    rng = random.Random()
    alpha, beta = rng.uniform(1e-6, 1e-5), 1 / rng.uniform(5e9, 50e9)
    sizes = [8 * 4 ** k for k in range(10)]
    line = [alpha + beta * s for s in sizes]
    # A measured curve is not a line: protocol changes and noise. Here the weights matter.
    bent = [t * rng.uniform(0.8, 1.25) * (1.6 if 2048 <= s <= 32768 else 1.0)
            for s, t in zip(sizes, line)]
    pts = lambda ts: ",".join(f"{s}:{t!r}" for s, t in zip(sizes, ts))
    rows = ctx.run_cases("fit", [{"points": pts(line)}, {"points": pts(bent)},
                                 {"points": "64:1e-6,64:2e-6"}, {"points": "64:1e-6"},
                                 {"points": "8:1e-6,64:0,512:3e-6"}])
    expect("status on a line", rows[0]["status"], "success")
    expect_close("alpha (s) of a line", rows[0]["alpha_s"], alpha, rel=1e-6)
    expect_close("beta (s/B) of a line", rows[0]["beta_s_per_byte"], beta, rel=1e-6)
    want = fit_relative(sizes, bent)
    expect("status on a bent curve", rows[1]["status"], "success")
    expect_close("alpha (s) of a bent curve (relative least squares)", rows[1]["alpha_s"],
                 want[0], rel=1e-6, abs=1e-6 * min(bent))
    expect_close("beta (s/B) of a bent curve (relative least squares)",
                 rows[1]["beta_s_per_byte"], want[1], rel=1e-6)
    expect("status when all sizes are equal", rows[2]["status"], "invalid argument")
    expect("status with one point", rows[3]["status"], "invalid argument")
    expect("status with a time of 0", rows[4]["status"], "invalid argument")


@lab.check("cpu.fit_measured", "Your fit of your own measurements", points=5, backend="cpu",
           parent="cpu.sweep")
def cpu_fit_measured(ctx, sweep):
    expect("fit status", sweep["fit_status"], "success")
    sizes, mine = [r["bytes"] for r in sweep["rows"]], series(sweep, "student_us")
    alpha, beta = fit_relative(sizes, mine)
    ctx.metric("alpha_us", sweep["alpha_s"] * 1e6)
    if sweep["beta_s_per_byte"]:
        ctx.metric("bandwidth_GBps", 1 / sweep["beta_s_per_byte"] / 1e9)
    expect_close("beta (s/B)", sweep["beta_s_per_byte"], beta, rel=1e-3)
    expect_close("alpha (s)", sweep["alpha_s"], alpha, rel=1e-3, abs=1e-3 * min(mine))


@lab.check("cpu.estimate", "Step estimate: every part within 1% of the model", points=20,
           backend="cpu")
def cpu_estimate(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random cases from seed {seed}")
    rng = random.Random(seed)
    rings = [dict(p=rng.choice([1, 2, 3, 8, 64, 1000]), bytes=rng.uniform(1e3, 1e10),
                  alpha_s=rng.uniform(1e-7, 2e-5), bandwidth_Bps=rng.uniform(1e9, 9e11))
             for _ in range(6)]
    rows = ctx.run_cases("ring", rings)
    for case, got in zip(rings, rows):
        a, b = ring_allreduce(case["p"], case["bytes"], (case["alpha_s"], case["bandwidth_Bps"]))
        label = f"ring AllReduce of {case['bytes']:.4g} B over {case['p']} ranks"
        expect(f"{label}: status", got["status"], "success")
        expect_close(f"{label}: alpha part (s)", got["alpha_s"], a, rel=1e-6, abs=1e-15)
        expect_close(f"{label}: beta part (s)", got["beta_s"], b, rel=1e-6, abs=1e-15)
    cases = [CHAPTER1] + EDGE_CASES + random_estimates(rng, 6)
    rows = ctx.run_cases("estimate", cases + [bad for _, bad in INVALID])
    for i, (case, got) in enumerate(zip(cases, rows)):
        label = f"case {i + 1} ({describe(case)})"
        expect(f"{label}: status", got["status"], "success")
        check_step(label, got, estimate(case))
    for (why, _), got in zip(INVALID, rows[len(cases):]):
        expect(f"status when {why}", got["status"], "invalid argument")
    ctx.metric("chapter1_comm_share", estimate(CHAPTER1)["share"])


@lab.check("cpu.plan", "Your layouts: the scale sweep and random jobs", points=0, backend="cpu")
def cpu_plan(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random jobs from seed {seed}")
    cases = SCALE + random_plans(random.Random(seed), 8)
    infeasible = dict(GPT3_175B, nodes=1)      # 175B does not fit in 8 GPUs
    rows = ctx.run_cases("plan", cases + [infeasible])
    return cases, rows[:-1], rows[-1]


@lab.check("cpu.layout", "Your layout choice vs the best layout (the model's step time)",
           points=20, backend="cpu", kind="decision", parent="cpu.plan")
def cpu_layout(ctx, planned):
    cases, rows, infeasible = planned
    expect("status when no layout fits in memory", infeasible["status"], "invalid argument")
    worst = None
    for i, (case, got) in enumerate(zip(cases, rows)):
        label = f"job {i + 1} ({describe(case)})"
        expect(f"{label}: status", got["status"], "success")
        tp, pp, dp = got["tp"], got["pp"], got["dp"]
        chosen = dict(case, tp=tp, pp=pp, dp=dp)
        mine = estimate(chosen) if min(tp, pp, dp) >= 1 and \
            all(x & (x - 1) == 0 for x in (tp, pp, dp)) else None
        if mine is None:
            raise CheckFailed(f"{label}: the layout is not valid", expected="powers of two, "
                              "tp*pp*dp = GPUs, pp | layers, micro_batch*dp | global batch",
                              found=f"tp={tp} pp={pp} dp={dp}")
        if not fits(case, tp, pp):
            raise CheckFailed(f"{label}: the model state does not fit",
                              expected=f"16 * params / (tp*pp) <= {case['mem_bytes']:.3g} B",
                              found=f"{16 * case['params'] / (tp * pp):.3g} B with tp={tp} pp={pp}")
        check_step(f"{label}, your layout", got, mine)
        best, model = best_layout(case)
        ratio = model["step_s"] / mine["step_s"]
        ctx.log(f"{label}: yours tp={tp} pp={pp} dp={dp} step {mine['step_s']:.4g} s; best "
                f"tp={best[0]} pp={best[1]} dp={best[2]} step {model['step_s']:.4g} s")
        ctx.perf_fractions.append(round(ramp(ratio, 0.8, 0.995), 4))
        if worst is None or ratio < worst[0]:
            worst = (ratio, label)
    gpus = [r["gpus"] for r in rows[:len(SCALE)]]
    ctx.plot("lab01-scale", {
        "communication share (%)": [(g, 100 * r["share"]) for g, r in zip(gpus, rows)],
        "alpha part of communication (%)": [
            (g, 100 * (r["tp_alpha_s"] + r["dp_alpha_s"] + r["pp_alpha_s"]) / r["comm_s"])
            for g, r in zip(gpus, rows) if r["comm_s"] > 0]},
        xlabel="GPUs (GPT-3 13B, DGX A100, your layouts)", ylabel="percent",
        title="lab01 scale sweep")
    frac = sum(ctx.perf_fractions) / len(ctx.perf_fractions)
    ctx.metric("fraction", frac)
    ctx.perf_messages.append(
        f"your layouts: mean score {frac:.3f} over {len(rows)} jobs; worst: step time "
        f"{1 / worst[0]:.3f}x the best layout's ({worst[1]}); full marks within 0.5%")


# --- the answers file ------------------------------------------------------------------

# The handout's questions with a checkable answer: key, what it is, the value, tolerance.
def decode_alpha_fraction():
    a, b = ring_allreduce(8, 8 * 8192 * 2, (0.6e-6, 87.7e9))
    return a / (a + b)


def train_alpha_fraction():
    a, b = ring_allreduce(8, 1 * 2048 * 5140 * 2, (3.4e-6, 240e9))
    return a / (a + b)


def first_gpus_over(share):
    for case in SCALE:
        if best_layout(case)[1]["share"] > share:
            return case["nodes"] * case["gpus_per_node"]
    return 0


ANSWERS = [
    ("decode_alpha_fraction", "alpha share of one decode TP AllReduce (section 3)",
     decode_alpha_fraction, 0.02),
    ("train_alpha_fraction", "alpha share of one training TP AllReduce (section 3)",
     train_alpha_fraction, 0.02),
    ("first_gpus_over_10pct", "first GPU count of the scale sweep with share > 10% (section 5)",
     lambda: first_gpus_over(0.10), 0),
]


@lab.check("cpu.answers", "Answers to the handout's questions (answers.txt)", points=10,
           backend="cpu", kind="question")
def cpu_answers(ctx):
    given = answers.read_answers(ctx)
    for key, what, value, tol in ANSWERS:
        got = answers.answer_number(given, key)
        want = value()
        if abs(got - want) > tol + 1e-9:
            raise CheckFailed(f"{key}: {what}", expected=f"{want:.4g} (within {tol})",
                              found=given[key])


# --- performance and the other backends -------------------------------------------------

@lab.check("cpu.perf", "Ping-pong bandwidth vs the harness's loop (4 MiB)", points=20,
           backend="cpu", kind="performance", timeout=90, parent="cpu.sweep")
def cpu_perf(ctx, _):
    bench = ctx.run_lab("bench", ["--bytes", "4M", "--repeats", "15"], ranks=2, backend="cpu")
    check_transfers(bench)
    row = bench["rows"][0]
    # The program interleaved the two loops (harness, yours, harness, ...) in one run. The
    # reference is the harness's loop: its paired median measured 0.93-0.96 on a quiet
    # two-core machine; full marks from 0.85 leave room for a busier one.
    perf_samples(ctx, student=row["student_gbps"], baseline=row["harness_gbps"], low=0.65,
                 high=0.85, unit="GB/s", name="one-way bandwidth")


@lab.check("sim.sweep", "Ping-pong on a simulated DGX A100 (NVSwitch)", points=0,
           backend="sim", timeout=60)
def sim_sweep(ctx):
    return ctx.run_lab("sweep", ["--system", "dgx-a100", "--repeats", "3"], ranks=2,
                       backend="sim")


@lab.check("sim.pingpong", "Simulated ping-pong: data and one-way time exact", points=10,
           backend="sim", parent="sim.sweep")
def sim_pingpong(ctx, sweep):
    check_transfers(sweep)
    sizes = [r["bytes"] for r in sweep["rows"]]
    # Virtual time is deterministic: your loop and the harness's must agree to 1%.
    for b, mine, ref in zip(sizes, series(sweep, "student_us"), series(sweep, "harness_us")):
        expect_close(f"one-way time at {int(b)} B (s)", mine, ref, rel=0.01)
    ctx.plot("lab01-sim", {"simulated DGX A100, GPU0-GPU1":
                           [(b, b / t / 1e9) for b, t in zip(sizes, series(sweep, "student_us"))]},
             xlabel="message size (bytes)", ylabel="one-way bandwidth (GB/s)",
             title="lab01 ping-pong on the sim backend")


@lab.check("sim.fit", "Simulated link: your fit equals the grader's", points=5, backend="sim",
           parent="sim.sweep")
def sim_fit(ctx, sweep):
    expect("fit status", sweep["fit_status"], "success")
    alpha, beta = fit_relative([r["bytes"] for r in sweep["rows"]], series(sweep, "student_us"))
    expect_close("alpha (s)", sweep["alpha_s"], alpha, rel=0.01)
    expect_close("beta (s/B)", sweep["beta_s_per_byte"], beta, rel=0.01)
    ctx.metric("alpha_us", alpha * 1e6)
    ctx.metric("bandwidth_GBps", 1 / beta / 1e9)


@lab.check("gpu.sweep", "Ping-pong between 2 GPUs with NCCL and its fit", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=120)
def gpu_sweep(ctx):
    sweep = ctx.run_lab("sweep", ["--max-bytes", "64M"], ranks=2, backend="gpu")
    check_transfers(sweep)
    expect("fit status", sweep["fit_status"], "success")
    alpha, beta = fit_relative([r["bytes"] for r in sweep["rows"]], series(sweep, "student_us"))
    expect_close("beta (s/B)", sweep["beta_s_per_byte"], beta, rel=1e-3)
    ctx.metric("alpha_us", alpha * 1e6)
    ctx.metric("bandwidth_GBps", 1 / beta / 1e9 if beta > 0 else 0)
