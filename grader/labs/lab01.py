"""lab01: why communication becomes the bottleneck (the alpha-beta model).

The grader checks the student's ping-pong against the harness's own loop in
the same run, refits the student's measurements itself, and recomputes the
step estimates with an independent implementation of the handout's model.
"""

import random
import statistics

from gradelib import CheckFailed, Lab, expect, expect_close, perf_samples

lab = Lab("lab01", title="通信为何成为瓶颈: alpha-beta 模型", program="lab01")

# --- the model, written again from the handout (not from the C reference) -------------

def ring_allreduce(p, nbytes, link):
    alpha, bw = link
    return 0.0 if p <= 1 else 2 * (p - 1) * alpha + 2 * (p - 1) / p * nbytes / bw


def estimate(case):
    g = case["gpus_per_node"]
    tp, pp, dp = case["tp"], case["pp"], case["dp"]
    intra = (case["intra_alpha_s"], case["intra_bandwidth_Bps"])
    inter = (case["inter_alpha_s"], case["inter_bandwidth_Bps"])
    act = case["micro_batch"] * case["seq_len"] * case["hidden"] * case["bytes_per_element"]
    grads = case["params"] / (tp * pp) * case["bytes_per_element"]
    tp_link = intra if tp <= g else inter
    dp_link = intra if tp * dp <= g else inter
    pp_link = intra if tp * dp * pp <= g else inter
    t_tp = 4 * case["layers"] / pp * case["micro_batches"] * ring_allreduce(tp, act, tp_link)
    t_dp = ring_allreduce(dp, grads, dp_link)
    t_pp = 2 * case["micro_batches"] * (pp_link[0] + act / pp_link[1]) if pp > 1 else 0.0
    comm = t_tp + t_dp + t_pp
    return {"tp_s": t_tp, "dp_s": t_dp, "pp_s": t_pp, "comm_s": comm,
            "share": comm / (case["compute_s"] + comm)}


def fit_line(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    beta = sxy / sxx
    return my - beta * mx, beta


# Chapter 1's cluster: 256 DGX A100 servers, GPT-3 175B with TP 8 x PP 16 x DP 16.
CHAPTER1 = dict(params=175e9, bytes_per_element=2, layers=96, hidden=12288, seq_len=2048,
                micro_batch=1, micro_batches=16, compute_s=20.0, nodes=256, gpus_per_node=8,
                intra_alpha_s=3e-6, intra_bandwidth_Bps=240e9,
                inter_alpha_s=8e-6, inter_bandwidth_Bps=25e9, tp=8, pp=16, dp=16)


# Layouts where only the right link rule gives the right answer: DP inside a node
# only with the TP ranks counted (tp*dp), PP crossing nodes, TP across nodes.
EDGE_CASES = [
    dict(CHAPTER1, nodes=4, tp=4, dp=4, pp=2, layers=32, micro_batches=4),
    dict(CHAPTER1, nodes=2, gpus_per_node=8, tp=2, dp=2, pp=4, layers=32),
    dict(CHAPTER1, nodes=4, gpus_per_node=4, tp=8, dp=2, pp=1, layers=24),
]


def random_cases(rng, n):
    cases = []
    while len(cases) < n:
        g = rng.choice([4, 8, 16])
        nodes = rng.choice([1, 2, 4, 16, 64])
        total = g * nodes
        tp = rng.choice([t for t in (1, 2, 4, 8, 16) if total % t == 0])
        pp = rng.choice([p for p in (1, 2, 4, 8) if (total // tp) % p == 0])
        dp = total // (tp * pp)
        layers = pp * rng.randint(1, 12)
        cases.append(dict(params=rng.choice([1.3e9, 7e9, 13e9, 70e9]) * rng.uniform(0.9, 1.1),
                          bytes_per_element=rng.choice([2, 4]), layers=layers,
                          hidden=rng.choice([2048, 4096, 5120, 8192]),
                          seq_len=rng.choice([1024, 2048, 4096]), micro_batch=rng.randint(1, 4),
                          micro_batches=rng.randint(1, 32), compute_s=rng.uniform(0.2, 5.0),
                          nodes=nodes, gpus_per_node=g,
                          intra_alpha_s=rng.uniform(1e-6, 5e-6),
                          intra_bandwidth_Bps=rng.uniform(50e9, 450e9),
                          inter_alpha_s=rng.uniform(3e-6, 2e-5),
                          inter_bandwidth_Bps=rng.uniform(10e9, 50e9), tp=tp, pp=pp, dp=dp))
    return cases


def as_args(case):
    return [f"{k}={v!r}" for k, v in case.items()]


# --- checks ---------------------------------------------------------------------------

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
    return ctx.run_lab("sweep", ranks=2, backend="cpu")


@lab.check("cpu.pingpong", "Ping-pong moves the data and times one way", points=20,
           backend="cpu", parent="cpu.sweep")
def cpu_pingpong(ctx, sweep):
    check_transfers(sweep)
    sizes = [r["bytes"] for r in sweep["rows"]]
    mine, ext = series(sweep, "student_us"), series(sweep, "external_us")
    ctx.plot("lab01-pingpong", {
        "your loop": [(b, b / t / 1e9) for b, t in zip(sizes, mine) if t > 0],
        "harness loop": [(b, b / t / 1e9) for b, t in zip(sizes, series(sweep, "harness_us"))]},
        xlabel="message size (bytes)", ylabel="one-way bandwidth (GB/s)",
        title="lab01 ping-pong (cpu)")
    # The harness timed each call of your loop from outside: the one-way time you report
    # must agree with it (a round trip reported as one way is off by 2x).
    off = [(b, m / e) for b, m, e in zip(sizes, mine, ext) if b >= 8192 and e > 0]
    worst = max(off, key=lambda x: abs(x[1] - 1.0))
    ctx.metric("reported_vs_external_worst", worst[1])
    if not 0.8 <= worst[1] <= 1.25:
        raise CheckFailed("reported one-way time disagrees with the time the call took",
                          expected="reported / (call time / 2 iters) in [0.8, 1.25]",
                          found=f"{worst[1]:.2f} at {worst[0]} B")


@lab.check("cpu.fit", "Fit alpha and beta: exact on a synthetic line", points=10, backend="cpu")
def cpu_fit_synthetic(ctx):
    rng = random.Random()
    alpha, beta = rng.uniform(1e-6, 1e-5), 1 / rng.uniform(5e9, 50e9)
    sizes = [8 * 4 ** k for k in range(10)]
    points = ",".join(f"{s}:{alpha + beta * s!r}" for s in sizes)
    rows = ctx.run_cases("fit", [{"points": points}, {"points": "64:1e-6,64:2e-6"}])
    expect("status", rows[0]["status"], "success")
    expect_close("alpha (s)", rows[0]["alpha_s"], alpha, rel=1e-6)
    expect_close("beta (s/B)", rows[0]["beta_s_per_byte"], beta, rel=1e-6)
    expect("status when all sizes are equal", rows[1]["status"], "invalid argument")


@lab.check("cpu.fit_measured", "Fitted alpha and beta of your measurements within 10%",
           points=10, backend="cpu", parent="cpu.sweep")
def cpu_fit_measured(ctx, sweep):
    expect("fit status", sweep["fit_status"], "success")
    sizes, mine = [r["bytes"] for r in sweep["rows"]], series(sweep, "student_us")
    alpha, beta = fit_line(sizes, mine)
    ctx.metric("alpha_us", sweep["alpha_s"] * 1e6)
    ctx.metric("bandwidth_GBps", 1 / sweep["beta_s_per_byte"] / 1e9 if sweep["beta_s_per_byte"] else 0)
    expect_close("beta (s/B)", sweep["beta_s_per_byte"], beta, rel=0.10)
    # alpha is a small intercept next to large times: compare it relative to the
    # smallest measured time as well as to itself.
    expect_close("alpha (s)", sweep["alpha_s"], alpha, rel=0.10, abs=0.10 * min(mine))


@lab.check("cpu.estimate", "Step estimate matches the model within 1%", points=30,
           backend="cpu")
def cpu_estimate(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random cases from seed {seed}")
    cases = [CHAPTER1] + EDGE_CASES + random_cases(random.Random(seed), 6)
    bad = dict(CHAPTER1, dp=15)
    rows = ctx.run_cases("estimate", cases + [bad])
    for i, (case, got) in enumerate(zip(cases, rows)):
        expect(f"case {i} status", got["status"], "success")
        want = estimate(case)
        for key in ("tp_s", "dp_s", "pp_s", "comm_s", "share"):
            expect_close(f"case {i} ({case['nodes']}x{case['gpus_per_node']} GPUs, "
                         f"tp={case['tp']} pp={case['pp']} dp={case['dp']}) {key}",
                         got[key], want[key], rel=0.01, abs=1e-12)
        link = (case["inter_alpha_s"], case["inter_bandwidth_Bps"])
        expect_close(f"case {i} ring AllReduce of 1 GB over dp={case['dp']} ranks",
                     got["ring_allreduce_check_s"], ring_allreduce(case["dp"], 1e9, link),
                     rel=0.01, abs=1e-12)
    ctx.metric("chapter1_comm_share", estimate(CHAPTER1)["share"])
    expect("status for tp*pp*dp != GPUs", rows[-1]["status"], "invalid argument")


@lab.check("cpu.perf", "Ping-pong bandwidth vs the harness's loop (4 MiB)", points=30,
           backend="cpu", kind="performance", timeout=90, parent="cpu.sweep")
def cpu_perf(ctx, _):
    bench = ctx.run_lab("bench", ["--bytes", "4M", "--repeats", "15"], ranks=2, backend="cpu")
    check_transfers(bench)
    row = bench["rows"][0]
    # The program interleaved the two loops (harness, yours, harness, ...) in one run.
    perf_samples(ctx, student=row["student_gbps"], baseline=row["harness_gbps"], low=0.7,
                 high=0.9, unit="GB/s", name="one-way bandwidth")


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


@lab.check("sim.fit", "Simulated link: your fit equals the grader's", points=10, backend="sim",
           parent="sim.sweep")
def sim_fit(ctx, sweep):
    expect("fit status", sweep["fit_status"], "success")
    alpha, beta = fit_line([r["bytes"] for r in sweep["rows"]], series(sweep, "student_us"))
    expect_close("alpha (s)", sweep["alpha_s"], alpha, rel=0.01)
    expect_close("beta (s/B)", sweep["beta_s_per_byte"], beta, rel=0.01)
    ctx.metric("alpha_us", alpha * 1e6)
    ctx.metric("bandwidth_GBps", 1 / beta / 1e9)


@lab.check("gpu.sweep", "Ping-pong between 2 GPUs with NCCL and its fit", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=120)
def gpu_sweep(ctx):
    sweep = ctx.run_lab("sweep", ranks=2, backend="gpu")
    check_transfers(sweep)
    alpha, beta = fit_line([r["bytes"] for r in sweep["rows"]], series(sweep, "student_us"))
    expect_close("beta (s/B)", sweep["beta_s_per_byte"], beta, rel=0.10)
    ctx.metric("bandwidth_GBps", 1 / beta / 1e9 if beta > 0 else 0)
