"""lab11: communication competing with computation for SMs, and overlapping the two.

The student models an AllReduce on C channels and a whole backward step in which the
AllReduce's channels take SMs from the kernels (written again here from the handout and
compared exactly), chooses the channels, the bucket size and how finely to cut the
kernels, and runs the step through the p2p interface, with the kernels as an operation
of the harness's modelled GPU (labs/lab11/harness_device.c). The harness times the kernels
alone, the library's AllReduce alone and the student's step in the same run, checks
every gradient and every kernel, and the trace's message sizes; on "sim" the whole step
is in virtual time. On GPUs the student's plan runs for real (harness/gpu.c).
"""

import math
import random
import statistics

from gradelib import CheckFailed, Lab, expect, expect_close
from gradelib.answers import check_answer, read_answers, score_answers
from gradelib.overlap import check_summed, cpu_step_checks, run_gpu, score_step

lab = Lab("lab11", title="SM 资源与计算通信重叠", program="lab11",
          student_files=["labs/lab11/lab11.c", "labs/lab11/answers.txt"])

MAX_PARTS = 64
# The syllabus's target: the step within 1.15 x max(kernels, AllReduce), none from 1.6 x.
HIGH, LOW = 1 / 1.15, 1 / 1.6


# --- the model, written again from the handout ------------------------------------------

def allreduce_s(m, nbytes, channels):
    p = m["ranks"]
    if p <= 1 or nbytes <= 0:
        return 0.0
    rounds = math.ceil(nbytes / (p * channels * m["slot_bytes"]))
    return 2.0 * (p - 1) * (rounds * m["alpha_s"] + nbytes / p / (m["link_gbps"] * 1e9))


def step_s(m, channels, bucket):
    rate = (m["sms"] - channels) / m["sms"]
    size, ready, head = [], [], 0
    t = comm_end = acc = 0.0
    for l in range(m["layers"] - 1, -1, -1):
        w = m["layer_s"][l]
        while w > 0:
            while head < len(size) and comm_end <= t:
                comm_end = max(comm_end, ready[head]) + allreduce_s(m, size[head], channels)
                head += 1
            if comm_end <= t:
                t, w = t + w, 0
            elif t + w / rate <= comm_end:
                t, w = t + w / rate, 0
            else:
                w -= (comm_end - t) * rate
                t = comm_end
        acc += m["layer_bytes"][l]
        if acc >= bucket or l == 0:
            size.append(acc)
            ready.append(t)
            acc = 0.0
    while head < len(size):
        comm_end = max(comm_end, ready[head]) + allreduce_s(m, size[head], channels)
        head += 1
    return max(t, comm_end)


def best_plan_s(m):
    """The best model time over every channel count and every bucket that closes at a
    layer boundary."""
    best, acc = math.inf, 0.0
    for k in range(m["layers"] - 1, -1, -1):
        acc += m["layer_bytes"][k]
        for c in range(1, m["max_channels"] + 1):
            best = min(best, step_s(m, c, acc))
    return best


def random_model(rng):
    layers = rng.randint(1, 30)
    equal = rng.random() < 0.5
    m = dict(ranks=rng.choice([2, 3, 4, 8, 16]), sms=rng.choice([80, 108, 132]),
             layers=layers, alpha_s=rng.uniform(1e-6, 2e-5), link_gbps=rng.uniform(10, 400),
             slot_bytes=rng.choice([65536, 262144, 524288, 2097152, 4194304]),
             max_channels=rng.choice([8, 16, 32]))
    base_s, base_b = rng.uniform(1e-5, 5e-4), 4 * rng.randint(1 << 14, 1 << 22)
    m["layer_s"] = [base_s if equal else base_s * rng.uniform(0.3, 3) for _ in range(layers)]
    m["layer_bytes"] = [base_b if equal else 4 * rng.randint(1, 1 << 22) for _ in range(layers)]
    return m


def case_of(m, rng):
    c = rng.randint(1, m["max_channels"])
    total = sum(m["layer_bytes"])
    return dict(ranks=m["ranks"], sms=m["sms"], layers=m["layers"],
                layer_s=",".join(repr(x) for x in m["layer_s"]),
                layer_bytes=",".join(str(int(x)) for x in m["layer_bytes"]),
                alpha_s=m["alpha_s"], link_gbps=m["link_gbps"], slot_bytes=m["slot_bytes"],
                max_channels=m["max_channels"], channels=c,
                bucket_bytes=float(rng.choice([1, total / 3, total / 7, total, 2 * total])),
                parts=rng.randint(1, 16), bytes=float(rng.choice([4, 4096, total, total * 3])))


# --- checks -------------------------------------------------------------------------------

@lab.check("cpu.model", "The model: an AllReduce on C channels and a whole step", points=15,
           timeout=60)
def cpu_model(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random machines from seed {seed}")
    rng = random.Random(seed)
    models = [random_model(rng) for _ in range(25)]
    cases = [case_of(m, rng) for m in models]
    rows = ctx.run_cases("model", cases)
    for i, (m, case, row) in enumerate(zip(models, cases, rows)):
        expect(f"case {i}: status", row["status"], "success")
        what = (f"case {i} ({m['ranks']} ranks, {m['layers']} layers, {case['channels']} "
                f"channels, slot {m['slot_bytes']} B)")
        expect_close(f"{what}: AllReduce of {case['bytes']:.0f} B (s)", row["allreduce_s"],
                     allreduce_s(m, case["bytes"], case["channels"]), rel=1e-6, abs=1e-15)
        expect_close(f"{what}: step with buckets of {case['bucket_bytes']:.0f} B (s)",
                     row["step_s"], step_s(m, case["channels"], case["bucket_bytes"]),
                     rel=1e-6, abs=1e-15)
    ctx.metric("cases", len(rows))
    ctx.log("models and cases: " + repr(cases[:2]))
    return models, rows


@lab.check("cpu.plan", "Your plan is the model's best (within 2%)", points=10,
           parent="cpu.model")
def cpu_plan(ctx, parent):
    models, rows = parent
    worst = 1.0
    for i, (m, row) in enumerate(zip(models, rows)):
        expect(f"case {i}: status of your plan", row["plan_status"], "success")
        c, b, parts = row["plan_channels"], row["plan_bucket_bytes"], row["plan_parts"]
        if not (1 <= c <= m["max_channels"] and b > 0 and 1 <= parts <= MAX_PARTS):
            raise CheckFailed(f"case {i}: your plan is outside the rules",
                              expected=f"1..{m['max_channels']} channels, a bucket > 0, "
                                       f"1..{MAX_PARTS} parts",
                              found=f"{c} channels, {b:g} B, {parts} parts")
        mine, best = step_s(m, c, b), best_plan_s(m)
        worst = max(worst, mine / best)
        if mine > 1.02 * best:
            raise CheckFailed(f"case {i} ({m['ranks']} ranks, {m['layers']} layers): your plan "
                              f"is far from the model's best",
                              expected=f"{best * 1e6:.2f} us (within 2%)",
                              found=f"{mine * 1e6:.2f} us with {c} channels, buckets of "
                                    f"{b:g} B")
    ctx.metric("worst_plan_over_best", worst)


def check_step(data, what):
    row = data["rows"][0]
    if row["unfinished"]:
        raise CheckFailed(f"{what}: a layer's kernel did not run to its end on "
                          f"{row['unfinished']} rank(s)", expected="every layer computed",
                          found="layers left")
    check_summed(row, what)
    slot = data["slot_bytes"]
    if row["largest_message"] > slot:
        raise CheckFailed(f"{what}: a message larger than a channel's slot",
                          expected=f"at most {slot:.0f} bytes", found=f"{row['largest_message']}")
    return row


def score(ctx, data, high, low, name):
    row = data["rows"][0]
    ctx.metric("plan", {k: data[k] for k in ("plan_channels", "plan_bucket_bytes",
                                             "plan_parts")})
    ctx.metric("kernels_s", row["kernels_s"])
    ctx.metric("allreduce_s", row["allreduce_s"])
    ctx.metric("comm_sms", row["comm_sms"])
    ctx.log(f"{data['backend']}: link {data['alpha_us']:.2f} us + {data['link_gbps']:.1f} GB/s, "
            f"{data['layers']} layers of {data['layer_us']:.1f} us, your plan: "
            f"{data['plan_channels']} channels, buckets of {data['plan_bucket_bytes']:.0f} B, "
            f"{data['plan_parts']} parts")
    score_step(ctx, row, high, low, name)


@lab.check("sim.step", "The step runs on a simulated DGX H100 (8 GPUs)", points=0,
           backend="sim", timeout=90)
def sim_step(ctx):
    return ctx.run_lab("step", ["--system", "dgx-h100", "--repeats", "1"], ranks=8,
                       backend="sim")


@lab.check("sim.correct", "Every gradient summed, every kernel run, messages within a slot",
           points=15, backend="sim", parent="sim.step")
def sim_correct(ctx, data):
    check_step(data, "DGX H100")


@lab.check("sim.perf", "Overlapped step <= 1.15 x max(kernels, AllReduce) (simulated)",
           points=25, backend="sim", kind="performance", parent="sim.step")
def sim_perf(ctx, data):
    row = data["rows"][0]
    ctx.plot("lab11-sim", {
        "kernels alone": [(1, row["kernels_s"][0] * 1e3)],
        "AllReduce alone": [(2, row["allreduce_s"][0] * 1e3)],
        "your step": [(3, row["step_s"][0] * 1e3)],
        "your step's kernels": [(4, row["step_kernels_s"][0] * 1e3)],
        "your last kernel ended": [(5, row["last_kernel_end_s"][0] * 1e3)]},
        xlabel="", ylabel="time (ms)", logx=False, title="lab11 on a simulated DGX H100")
    score(ctx, data, HIGH, LOW, "overlapped step vs max(kernels, AllReduce)")


@lab.check("sim.answers", "Answers: the step when kernels and AllReduce are as long", points=5,
           backend="sim", kind="question", timeout=90)
def sim_answers(ctx):
    ans = read_answers(ctx)
    data = ctx.run_lab("step", ["--system", "dgx-h100", "--repeats", "1", "--ratio", "1"],
                       ranks=8, backend="sim", name="ratio1.json")
    row = data["rows"][0]
    mine = row["step_s"][0] / max(row["kernels_s"][0], row["allreduce_s"][0])
    layers = data["layers"]
    m = dict(ranks=8, sms=data["sms"], layers=layers, alpha_s=data["alpha_us"] * 1e-6,
             link_gbps=data["link_gbps"], slot_bytes=data["slot_bytes"], max_channels=32,
             layer_s=[data["layer_us"] * 1e-6] * layers,
             layer_bytes=[data["grad_bytes"] / layers] * layers)
    best = best_plan_s(m) / (data["layer_us"] * 1e-6 * layers)
    ctx.metric("your_ratio1_step_over_max", mine)
    ctx.metric("model_best_at_ratio1", best)
    possible = "yes" if best <= 1.15 else "no"
    score_answers(ctx, [
        check_answer(ans, "sim_ratio1_step_over_max", lambda v: abs(v - mine) <= 0.03 * mine,
                     f"{mine:.3f} from your own run, within 3%", number=True),
        check_answer(ans, "ratio1_within_1_15_possible", lambda v: v.lower() == possible,
                     possible)])


cpu_step_checks(lab, check_step)


@lab.check("gpu.overlap", "GPU: your plan with real kernels and ncclAllReduce", points=10,
           backend="gpu", kind="performance", needs={"gpus": 2}, timeout=300)
def gpu_overlap(ctx):
    data = run_gpu(ctx, "wrong elements (gradients and kernel outputs, checked on the GPUs)")
    ctx.log(f"{data['sms']} SMs, your plan: {data['plan_channels']} channels, buckets of "
            f"{data['plan_bucket_bytes']:.0f} B")
    score_step(ctx, data["rows"][0], HIGH, LOW, "overlapped step vs max(kernels, ncclAllReduce)")
