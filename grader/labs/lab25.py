"""lab25: gradient compression (FP16/BF16 casting, top-k and scaled sign with error feedback).

The harness (labs/lab25/harness_train.c) trains a logistic-regression model data-parallel on MPI
ranks, calling the student's compressed exchange at every step. At every step it checks the
rank's message against its own encoding of gradient + residual, the residual against error
feedback, the result against the mean of every rank's message (gathered by the harness
itself), and the bytes in the trace of the student's sends and receives. The model moves with
the harness's decoding, so the loss measures the compressor, not a number the student reports.
"""

from gradelib import CheckFailed, Lab, answers
from gradelib.perf import ramp

lab = Lab("lab25", title="梯度压缩: FP16/BF16, top-k and sign with error feedback",
          program="lab25")

RANKS = [1, 2, 3]
CHECKED = "none,fp16,bf16,topk:0.01,topk:0.05,sign"
TOLERANCE = 0.10        # final loss at most 10% above uncompressed training's
BAD = {"call_errors": "your exchange returned an error",
       "bad_encoding": "a message is not the exact encoding of gradient + residual",
       "bad_residual": "the residual is not what the message left out (error feedback)",
       "bad_out": "out is not the mean of every rank's decoded message",
       "bad_wire": "the trace does not show p - 1 messages of the method's size each way"}

# The decision: three jobs, one step model. The 512-parameter gradient stands for a model of
# PSI parameters (every message is scaled by PSI / 512). Cast gradients (none, fp16, bf16) can
# be summed on the way: the job reduces them with a ring AllReduce, 2(P-1) steps of 1/P of the
# tensor. Top-k and sign messages cannot be summed (the sum of two top-k is not a top-k): the
# job gathers them, P - 1 messages per rank. Time to target = steps to the target loss (measured
# with your exchange) x (compute + communication).
PSI = 25e6
LINKS = {  # name: (alpha s, bandwidth B/s, compute s per step, ranks P of the job)
    "ib128": (10e-6, 25e9, 0.02, 128),   # 128 GPUs over 200 Gb/s InfiniBand
    "eth8": (20e-6, 3.125e9, 0.05, 8),   # 8 nodes over 25 Gb/s Ethernet
    "wan8": (5e-3, 25e6, 0.1, 8),        # 8 sites over 200 Mb/s
}
GRID = ["none", "fp16", "bf16", "topk:0.005", "topk:0.01", "topk:0.02", "topk:0.05",
        "topk:0.1", "topk:0.2", "sign"]
DECISION_RANKS = 3
DECISION_SEED = 2526


def check_row(row, ranks):
    label = f"{row['method']} on {ranks} rank(s)"
    for key, why in BAD.items():
        if row[key]:
            raise CheckFailed(f"{label}: {why} (step {row['steps']})",
                              expected=f"{key} = 0", found=f"{key} = {row[key]}; "
                              f"error: {row.get('error', '-')}")
    return label


def converged(row, ranks):
    label = check_row(row, ranks)
    if not row["final_loss"] <= row["base_loss"] * (1 + TOLERANCE):
        raise CheckFailed(f"{label}: training does not converge like uncompressed training",
                          expected=f"final loss <= {row['base_loss'] * (1 + TOLERANCE):.5f} "
                          f"(uncompressed {row['base_loss']:.5f} + 10%)",
                          found=f"{row['final_loss']:.5f}")


def rows_of(results, prefix):
    out = [(n, r) for n, data in results.items() for r in data["rows"]
           if r["method"].startswith(prefix)]
    if not out:
        raise CheckFailed(f"no results for {prefix}", expected="a row per rank count",
                          found="none")
    return out


@lab.check("cpu.train", "Training with your exchange on 1, 2 and 3 MPI ranks", points=0,
           backend="cpu", timeout=120)
def cpu_train(ctx):
    return {n: ctx.run_lab("train", ["--methods", CHECKED], ranks=n, backend="cpu", timeout=60)
            for n in RANKS}


def _method_check(prefix):
    def check(ctx, results):
        for n, row in rows_of(results, prefix):
            check_row(row, n)
            ctx.metric(f"{row['method']}-{n}-wire_bytes", row["wire_bytes"])
    return check


for _id, _prefix, _title, _points in (
        ("cpu.exchange", "none", "The exchange: every rank's message, the mean, p - 1 sends", 10),
        ("cpu.fp16", "fp16", "FP16 casting: round to nearest even, error feedback", 10),
        ("cpu.bf16", "bf16", "BF16 casting: round to nearest even, error feedback", 5),
        ("cpu.topk", "topk", "Top-k with error feedback (densities 1% and 5%)", 20),
        ("cpu.sign", "sign", "Scaled sign (1 bit) with error feedback", 15)):
    lab.check(_id, _title, points=_points, backend="cpu", parent="cpu.train")(
        _method_check(_prefix))


@lab.check("cpu.converge", "Every method ends within 10% of uncompressed training's loss",
           points=10, backend="cpu", parent="cpu.train")
def cpu_converge(ctx, results):
    for n, data in results.items():
        for row in data["rows"]:
            converged(row, n)
    data = results[max(results)]
    ctx.plot("lab25-loss", {r["method"]: [(10 * (i + 1), v) for i, v in enumerate(r["losses"])]
                            for r in data["rows"]},
             xlabel="step", ylabel="training loss", logx=False,
             title=f"lab25: loss with each compressor ({max(results)} ranks)")


def _step_time(row, link):
    alpha, bandwidth, compute, ranks = LINKS[link]
    if row["method"] in ("none", "fp16", "bf16"):
        tensor = PSI * row["msg_bytes"] / 512
        return compute + 2 * (ranks - 1) * (alpha + tensor / ranks / bandwidth)
    return compute + (ranks - 1) * (alpha + row["msg_bytes"] * PSI / 512 / bandwidth)


def _time_to_target(row, link):
    if row["steps_to_target"] < 0:
        return float("inf")
    return row["steps_to_target"] * _step_time(row, link)


@lab.check("cpu.choice", "Your method and k for three jobs: time to the target loss",
           points=30, backend="cpu", kind="decision", parent="cpu.train", timeout=120)
def cpu_choice(ctx, _):
    given = answers.read_answers(ctx)
    chosen = {link: answers.answer(given, link) for link in LINKS}
    methods = list(dict.fromkeys(GRID + list(chosen.values())))
    data = ctx.run_lab("train", ["--methods", ",".join(methods), "--seed", DECISION_SEED],
                       ranks=DECISION_RANKS, backend="cpu", timeout=90, name="choice.json")
    rows = {r["method"]: r for r in data["rows"]}
    for row in rows.values():
        check_row(row, DECISION_RANKS)
    for link, choice in chosen.items():
        mine = _time_to_target(rows[choice], link)
        best_name = min(GRID, key=lambda m: _time_to_target(rows[m], link))
        best = _time_to_target(rows[best_name], link)
        ctx.log(f"{link}: yours {choice} {mine:.3g} s to the target loss; best of the grid "
                f"{best_name} {best:.3g} s")
        ctx.perf_fractions.append(round(ramp(best / mine if mine > 0 else 0, 0.7, 0.97), 4))
