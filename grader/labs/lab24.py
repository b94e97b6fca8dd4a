"""lab24: DDP's gradient buckets, each AllReduced while the backward pass goes on.

The student writes DDP's bucket assignment (compute_bucket_assignment_by_size over the
gradient-ready order, with the first-bucket cap and DDP_SET_LAST_BUCKET_CAP), a
non-blocking ring AllReduce that moves on only when called, the overlapped step over the
harness's backward pass (labs/lab24/harness_step.c: a GPT-style stack whose kernels produce the
gradients), and the bucket caps for a machine. The harness measures the backward pass
alone, the library's AllReduce of every gradient alone and the student's step in the same
run, checks every gradient, and that the buckets are DDP's for the chosen caps. On "sim"
the whole step is in virtual time; on GPUs the chosen buckets run for real with NCCL
(harness_gpu.c).
"""

import random

from gradelib import CheckFailed, Lab, expect, ramp
from gradelib.answers import check_answer, read_answers, score_answers
from gradelib.overlap import check_summed, cpu_step_checks, run_gpu, score_step

lab = Lab("lab24", title="计算通信重叠", program="lab24",
          student_files=["labs/lab24/lab24.c", "labs/lab24/answers.txt"])

# The syllabus's target: the step within 1.1 x max(backward, AllReduce); none from 1.4 x
# (one bucket for everything, nothing overlapped, is about 1.4 x).
HIGH, LOW = 1 / 1.1, 1 / 1.4
SIM = ["--system", "dgx-h100", "--repeats", "1"]


# --- DDP's assignment, written again from reducer.cpp ------------------------------------

def ddp_assign(sizes, order, first_cap, cap, last_small):
    """Buckets (lists of parameter numbers) for gradients ready in `order`."""
    idx = list(reversed(order)) if last_small else list(order)
    limits, at = [first_cap, cap], 0
    buckets, cur, size = [], [], 0.0
    for i in idx:
        cur.append(i)
        size += sizes[i]
        if size >= limits[at]:
            buckets.append(cur)
            cur, size, at = [], 0.0, min(at + 1, 1)
    if cur:
        buckets.append(cur)
    if last_small:
        buckets.reverse()
    return buckets


def as_text(buckets):
    return "|".join(",".join(str(i) for i in b) for b in buckets)


def random_case(rng, at_cap=False):
    """A fresh case. at_cap: the first bucket's cap is reached exactly by a proper prefix of
    the order the buckets are built in, so that a bucket closed only over its cap shows."""
    if at_cap:
        case, sizes, order = random_case(rng)
        n = len(sizes)
        if n < 2:
            return random_case(rng, at_cap=True)
        built = list(reversed(order)) if case["last_small"] else order
        case["first_cap"] = float(sum(sizes[i] for i in built[:rng.randint(1, n - 1)]))
        return case, sizes, order
    n = rng.choice([1, 2, 3, rng.randint(4, 40), rng.randint(40, 300)])
    sizes = [4 * (rng.randint(1, 4096) if rng.random() < 0.3 else rng.randint(1, 1 << 22))
             for _ in range(n)]
    order = list(range(n))
    if rng.random() < 0.5:
        order.reverse()
    else:
        rng.shuffle(order)
    total = sum(sizes)
    kind = rng.random()
    if kind < 0.3:  # a cap that a prefix of the order reaches exactly: >= or >?
        k = rng.randint(1, n)
        src = list(reversed(order)) if rng.random() < 0.5 else order
        cap = float(sum(sizes[i] for i in src[:k]))
        first = float(sum(sizes[i] for i in src[:rng.randint(1, k)]))
    else:
        cap = float(rng.choice([1, 65536, 1 << 20, 25 << 20, total / rng.randint(1, 9),
                                2 * total]))
        first = float(rng.choice([1, 1 << 20, cap, cap / 3, 2 * cap]))
    return dict(sizes=",".join(str(s) for s in sizes), order=",".join(str(i) for i in order),
                first_cap=first, cap=cap, last_small=rng.randint(0, 1)), sizes, order


# --- checks ------------------------------------------------------------------------------------

@lab.check("cpu.assign", "DDP's bucket assignment in gradient-ready order", points=15, timeout=60)
def cpu_assign(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random cases from seed {seed}")
    rng = random.Random(seed)
    made = [random_case(rng) for _ in range(40)]
    made.insert(rng.randint(0, 40), random_case(rng, at_cap=True))
    bad = dict(sizes="4096,4096", order="0,1", first_cap=0.0, cap=1048576.0, last_small=0)
    rows = ctx.run_cases("assign", [c for c, _, _ in made] + [bad])
    for i, ((case, sizes, order), row) in enumerate(zip(made, rows)):
        expect(f"case {i}: status", row["status"], "success")
        want = as_text(ddp_assign(sizes, order, case["first_cap"], case["cap"],
                                  case["last_small"]))
        if row["assignment"] != want:
            raise CheckFailed(f"case {i} ({len(sizes)} gradients, caps {case['first_cap']:.0f} "
                              f"and {case['cap']:.0f} B, last_small {case['last_small']}): "
                              f"not DDP's buckets", expected=want[:300],
                              found=row["assignment"][:300])
    if rows[-1]["status"] == "success":
        raise CheckFailed("a first-bucket cap of 0 bytes was accepted",
                          expected="CL_ERR_INVALID with a reason", found="success")
    ctx.metric("cases", len(rows))


@lab.check("sim.step", "The step runs on a simulated DGX H100 (8 GPUs) and on two of them (16)",
           points=0, backend="sim", timeout=120)
def sim_step(ctx):
    return {8: ctx.run_lab("step", SIM, ranks=8, backend="sim"),
            16: ctx.run_lab("step", SIM, ranks=16, backend="sim")}


def check_step(data, what):
    row = data["rows"][0]
    if row["unfinished"]:
        raise CheckFailed(f"{what}: the backward pass did not run to its end on "
                          f"{row['unfinished']} rank(s)", expected="every kernel run",
                          found="kernels left")
    check_summed(row, what)
    if not data["ddp_match"]:
        raise CheckFailed(f"{what}: your step's buckets are not DDP's for your caps "
                          f"({data['first_cap']:.0f}, {data['cap']:.0f}, last_small "
                          f"{data['last_small']})", expected="lab24_assign's buckets",
                          found="other buckets")
    return row


@lab.check("sim.correct", "Every gradient summed, every kernel run, DDP's buckets", points=15,
           backend="sim", parent="sim.step")
def sim_correct(ctx, runs):
    for n, data in runs.items():
        check_step(data, f"{n} simulated GPUs")


def score(ctx, data, high, low, name):
    row = data["rows"][0]
    ctx.metric("caps", {k: data[k] for k in ("first_cap", "cap", "last_small", "buckets")})
    ctx.metric("kernels_s", row["kernels_s"])
    ctx.metric("allreduce_s", row["allreduce_s"])
    ctx.metric("last_kernel_end_s", row["last_kernel_end_s"])
    ctx.log(f"{data['backend']}: ring step {data['alpha_us']:.2f} us + {data['link_gbps']:.1f} "
            f"GB/s, reductions {data['reduce_gbps']:.0f} GB/s, parts of {data['quantum_us']:.1f}"
            f" us; your caps: {data['first_cap']:.0f} / {data['cap']:.0f} B, last_small "
            f"{data['last_small']}: {data['buckets']} buckets")
    score_step(ctx, row, high, low, name)


@lab.check("sim.perf", "Overlapped step <= 1.1 x max(backward, AllReduce), 8 GPUs (simulated)",
           points=15, backend="sim", kind="performance", parent="sim.step")
def sim_perf(ctx, runs):
    row = runs[8]["rows"][0]
    ctx.plot("lab24-sim", {
        "backward alone": [(1, row["kernels_s"][0] * 1e3)],
        "AllReduce alone": [(2, row["allreduce_s"][0] * 1e3)],
        "your step": [(3, row["step_s"][0] * 1e3)],
        "your last kernel ended": [(4, row["last_kernel_end_s"][0] * 1e3)]},
        xlabel="", ylabel="time (ms)", logx=False, title="lab24 on a simulated DGX H100")
    score(ctx, runs[8], HIGH, LOW, "overlapped step vs max(backward, AllReduce), 8 GPUs")


@lab.check("sim.perf16", "Overlapped step <= 1.1 x max(backward, AllReduce), 2 nodes (simulated)",
           points=5, backend="sim", kind="performance", parent="sim.step")
def sim_perf16(ctx, runs):
    score(ctx, runs[16], HIGH, LOW, "overlapped step vs max(backward, AllReduce), 16 GPUs")


# The choice of caps on two machines where the best caps differ: two DGX H100 (the ring
# crosses the NICs, buckets want to be large) and a PCIe server (slow links, many small
# buckets hide best), each with the backward pass only 1.5 x the AllReduce, where a wrong cap
# shows. Yours against the best of a grid of caps, each run with your own step.
CHOICE_MACHINES = [("dgx-h100", 16), ("pcie-8gpu", 8)]
CHOICE_RATIO = "1.5"
CHOICE_CAPS = [1 << k for k in range(19, 27)]          # 512 KiB .. 64 MiB
CHOICE_FULL, CHOICE_NONE = 1.01, 1.10                 # yours / the best


def grid(cap):
    """DDP's default first bucket, with the small bucket first and last, and no first cap."""
    return [(min(1 << 20, cap), cap, 0), (min(1 << 20, cap), cap, 1), (cap, cap, 0)]


@lab.check("sim.caps", "Your caps on two machines vs the best of a grid (your own step)",
           points=15, backend="sim", kind="decision", parent="sim.step", timeout=150)
def sim_caps(ctx, runs):
    fractions, worst = [], None
    for system, n in CHOICE_MACHINES:
        what = f"{system}, {n} simulated GPUs"
        base = ["--system", system, "--repeats", "1", "--ratio", CHOICE_RATIO]
        tag = f"{system}-{n}"
        mine = ctx.run_lab("step", base, ranks=n, backend="sim", name=f"caps-{tag}.json")
        check_step(mine, f"{what}, your caps")
        mine_s = mine["rows"][0]["step_s"][0]
        best = (mine_s, "yours")
        for cap in ctx.sanitizer_subset(CHOICE_CAPS):
            for first, c, last in grid(cap):
                data = ctx.run_lab("step", base + ["--cap", str(c), "--first-cap", str(first),
                                                   "--last-small", str(last)],
                                   ranks=n, backend="sim", name=f"caps-{tag}-grid.json")
                check_step(data, f"{what}, caps {first} / {c}")
                s = data["rows"][0]["step_s"][0]
                if s < best[0]:
                    best = (s, f"{first} / {c} B, last_small {last}")
        ratio = mine_s / best[0]
        frac = round(ramp(1 / ratio, 1 / CHOICE_NONE, 1 / CHOICE_FULL), 4)
        fractions.append(frac)
        ctx.metric(f"step_s_{tag}", {"yours": mine_s, "best": best[0], "best_caps": best[1]})
        ctx.log(f"{what}: your caps {mine['first_cap']:.0f} / {mine['cap']:.0f} B, last_small "
                f"{mine['last_small']}: step {mine_s * 1e3:.4f} ms; best of the grid "
                f"{best[0] * 1e3:.4f} ms ({best[1]}): {ratio:.3f} x, score {frac:.2f}")
        if worst is None or ratio > worst[0]:
            worst = (ratio, what)
    frac = sum(fractions) / len(fractions)
    ctx.perf_fractions.append(frac)
    ctx.metric("fraction", frac)
    ctx.perf_messages.append(
        f"your caps: mean score {frac:.3f} over {len(fractions)} machines; worst: step "
        f"{worst[0]:.3f} x the best of the grid ({worst[1]}); full marks within "
        f"{CHOICE_FULL:.2f} x, none from {CHOICE_NONE:.2f} x")


@lab.check("sim.answers", "Answers: DDP's defaults here, the ring's bottleneck across nodes",
           points=5, backend="sim", kind="performance", timeout=90)
def sim_answers(ctx):
    ans = read_answers(ctx)
    data = ctx.run_lab("step", SIM + ["--cap", "25M", "--first-cap", "1M"], ranks=8,
                       backend="sim", name="ddp-defaults.json")
    row = data["rows"][0]
    mine = row["step_s"][0] / max(row["kernels_s"][0], row["allreduce_s"][0])
    ctx.metric("ddp_defaults_step_over_max", mine)
    score_answers(ctx, [
        check_answer(ans, "ddp_defaults_step_over_max", lambda v: abs(v - mine) <= 0.01 * mine,
                     f"{mine:.3f} from your own run, within 1%", number=True),
        check_answer(ans, "ring_bottleneck_16", lambda v: v.lower() == "nic", "nic")])


cpu_step_checks(lab, check_step)


@lab.check("gpu.overlap", "GPU: your buckets with real kernels and ncclAllReduce", points=10,
           backend="gpu", kind="performance", needs={"gpus": 2}, timeout=300)
def gpu_overlap(ctx):
    data = run_gpu(ctx, "wrong gradient elements (checked on the GPUs)")
    ctx.log(f"your caps: {data['first_cap']:.0f} / {data['cap']:.0f} B, last_small "
            f"{data['last_small']}: {data['buckets']} buckets")
    score_step(ctx, data["rows"][0], HIGH, LOW,
               "overlapped step vs max(backward, ncclAllReduce)")
