"""lab22: ZeRO's communication: ZeRO-1/2/3 on a small MLP.

The student writes the ring ReduceScatter and AllGather, one training loop for plain data
parallelism and ZeRO's three stages, and ZeRO-2's gradient bucket for a cluster. The
harness checks the model after k steps against its own plain data-parallel run in double
precision (labs/lab22/harness_train.c), reads the bytes each rank sent and the memory it
held from its trace of the call, and scores the bucket with the model of
labs/lab22/harness_bucket.c against the best bucket, found in the same run.
"""

import math
import random

from gradelib import CheckFailed, Lab, answers, expect
from gradelib.perf import ramp

lab = Lab("lab22", title="ZeRO 通信模式", program="lab22",
          student_files=["labs/lab22/lab22.c", "labs/lab22/answers.txt"])

RANKS = (2, 4)
HIGH, LOW = 0.98, 0.90        # best step / yours: full marks within 2%, none beyond 10%
SCENARIOS = 8


# --- 1-2: the collectives -------------------------------------------------------------------

@lab.check("cpu.collectives", "Ring ReduceScatter and AllGather: exact, (N-1)/N of the data sent",
           points=15, backend="cpu", timeout=90)
def cpu_collectives(ctx):
    checked = 0
    for n in (2, 3, 4):
        data = ctx.run_lab("collectives", ranks=n, backend="cpu", name=f"collectives-{n}.json")
        for row in data["rows"]:
            what = f"{n} ranks, {row['coll']} of {row['count']} floats"
            if row["status"] != "success" or row["failed_ranks"]:
                raise CheckFailed(f"{what}: your function failed", expected="success",
                                  found=f"{row['status']}: {row.get('error', '')}")
            if row["wrong"]:
                raise CheckFailed(f"{what}: wrong results", expected="0 wrong floats",
                                  found=f"{row['wrong']} wrong")
            if row["sent_min"] != row["sent_expected"] or row["sent_max"] != row["sent_expected"]:
                raise CheckFailed(f"{what}: bytes sent per rank (the harness's trace)",
                                  expected=f"{row['sent_expected']} ((N-1)/N of the data)",
                                  found=f"{row['sent_min']} to {row['sent_max']}")
            checked += 1
    ctx.metric("calls_checked", checked)


# --- 3: training ----------------------------------------------------------------------------

@lab.check("cpu.train", "Plain data parallelism and ZeRO-1/2/3 on 2 and 4 ranks", points=0,
           backend="cpu", timeout=120)
def cpu_train(ctx):
    return {n: {row["stage"]: row for row in
                ctx.run_lab("train", ranks=n, backend="cpu", name=f"train-{n}.json")["rows"]}
            for n in RANKS}


def check_stage(ctx, runs, stage):
    for n, rows in runs.items():
        row = rows.get(stage)
        what = f"stage {stage} on {n} ranks"
        if row is None:
            raise CheckFailed(f"{what}: no result", expected="a row", found="none")
        if row["status"] != "success" or row["failed_ranks"]:
            raise CheckFailed(f"{what}: lab22_train failed", expected="success",
                              found=f"{row['status']}: {row.get('error', '')}")
        if row["inputs_changed"]:
            raise CheckFailed(f"{what}: the job's inputs (params, x, t) are read only",
                              expected="0 floats changed",
                              found=f"{row['inputs_changed']} changed")
        if row["far"]:
            raise CheckFailed(f"{what}: your shards of the model after the steps differ from "
                              f"plain data parallelism's (|got - want| <= max(1e-4 |want|, 1e-5))",
                              expected="0 parameters off", found=f"{row['far']} off")
        if row["sent_min"] != row["sent_expected"] or row["sent_max"] != row["sent_expected"]:
            factor = 3 if stage == 3 else 2
            raise CheckFailed(f"{what}: bytes each rank sent (the harness's trace)",
                              expected=f"{row['sent_expected']} ({factor}Ψ(N-1)/N per step)",
                              found=f"{row['sent_min']} to {row['sent_max']}")
    ctx.metric("sent_bytes", {n: rows[stage]["sent_max"] for n, rows in runs.items()})


@lab.check("cpu.dp", "Plain data parallelism: the model after k steps, 2Ψ sent", points=10,
           backend="cpu", parent="cpu.train")
def cpu_dp(ctx, runs):
    check_stage(ctx, runs, 0)


@lab.check("cpu.zero1", "ZeRO-1: sharded optimizer state, the same model, 2Ψ sent", points=10,
           backend="cpu", parent="cpu.train")
def cpu_zero1(ctx, runs):
    check_stage(ctx, runs, 1)


@lab.check("cpu.zero2", "ZeRO-2: gradients reduce-scattered in the backward pass, 2Ψ sent",
           points=10, backend="cpu", parent="cpu.train")
def cpu_zero2(ctx, runs):
    check_stage(ctx, runs, 2)


@lab.check("cpu.zero3", "ZeRO-3: parameters gathered per layer, twice a step, 3Ψ sent",
           points=15, backend="cpu", parent="cpu.train")
def cpu_zero3(ctx, runs):
    check_stage(ctx, runs, 3)


@lab.check("cpu.memory", "Per-rank memory, from every cl_mem_alloc: the 1/N shrink", points=10,
           backend="cpu", parent="cpu.train")
def cpu_memory(ctx, runs):
    series = {}
    for n, rows in runs.items():
        for stage in range(4):
            row = rows.get(stage)
            if row is None or row["status"] != "success":
                raise CheckFailed(f"stage {stage} on {n} ranks did not run",
                                  expected="success", found=row["status"] if row else "none")
            if row["peak_max"] > row["peak_bound"]:
                raise CheckFailed(f"stage {stage} on {n} ranks: the most memory a rank held "
                                  f"at once (cl_mem_alloc less cl_mem_free)",
                                  expected=f"<= {row['peak_bound']} B (model states "
                                           f"{row['states_bytes']} B, activations, one "
                                           f"layer's buffers)",
                                  found=f"{row['peak_max']} B")
        peaks = [rows[s]["peak_max"] for s in range(4)]
        ctx.log(f"{n} ranks: peak bytes per rank, stages 0-3: {peaks}")
        series[f"{n} ranks"] = [(s, rows[s]["peak_max"] / 1024) for s in range(4)]
    ctx.plot("lab22-memory", series, xlabel="ZeRO stage", ylabel="peak KiB per rank",
             logx=False, title="lab22: the memory each rank held (harness's trace)")


# --- 4: the bucket --------------------------------------------------------------------------

# Recorded clusters: one GPU's dense bf16 peak and one GPU's share of the network, at 80%
# of the link (DGX H100: 8 ConnectX-7 at 400 Gb/s; DGX A100: 8 ConnectX-6 at 200 Gb/s;
# an A100 cluster on 100 GbE RoCE).
CLUSTERS = {"dgx-h100": (989e12, 0.8 * 50e9), "dgx-a100": (312e12, 0.8 * 25e9),
            "a100-roce-100g": (312e12, 0.8 * 12.5e9)}
MODELS = (1.3e9, 2.7e9, 6.7e9, 13e9)   # GPT-3's sizes (Brown et al. 2020, table 2.1)


def random_cluster(rng):
    name = rng.choice(sorted(CLUSTERS))
    flops, bw = CLUSTERS[name]
    params, tokens = rng.choice(MODELS), rng.choice((1024, 2048, 4096, 8192))
    return name, dict(params=params, elem_bytes=2, ranks=rng.choice((16, 32, 64, 128, 256)),
                      backward_s=round(4 * params * tokens / (0.45 * flops), 6),
                      alpha_s=round(rng.uniform(5e-6, 20e-6), 8), bytes_per_s=bw,
                      free_bytes=rng.choice((0.5e9, 1e9, 2e9, 4e9, 8e9)))


def modelled_step(c, s):
    """The handout's step with buckets of s elements: forward, backward, and the buckets'
    ReduceScatters queued on the link behind it."""
    psi, tb, nb = c["params"], c["backward_s"], math.ceil(c["params"] / s)

    def ring(x):
        return (c["ranks"] - 1) * (c["alpha_s"] + x * c["elem_bytes"] / c["ranks"] /
                                   c["bytes_per_s"])
    if nb <= 1:
        return tb / 2 + tb + ring(psi)
    fill, send = tb * s / psi, ring(s)
    link = max(fill + (nb - 1) * send, (nb - 1) * fill + send)
    return tb / 2 + max(tb, link) + ring(psi - (nb - 1) * s)


def bucket_matters(c):
    """Whether the largest bucket that fits and DeepSpeed's default (5e8 elements) are both
    well off the best bucket (best step / theirs below 0.95), searched on a geometric grid
    and at the sizes that split the model evenly."""
    smax = min(c["params"], math.floor(c["free_bytes"] / (2 * c["elem_bytes"])))
    sizes = [math.floor(smax ** (i / 400)) for i in range(401)]
    sizes += [math.ceil(c["params"] / m) for m in range(1, 2049)
              if math.ceil(c["params"] / m) <= smax]
    best = min(modelled_step(c, x) for x in sizes)
    return all(best / modelled_step(c, x) < 0.95 for x in (smax, min(5e8, smax)))


def bucket_bound_cluster(rng):
    """A fresh scenario where the bucket matters (bucket_matters)."""
    while True:
        name, case = random_cluster(rng)
        if bucket_matters(case):
            return name, case


@lab.check("cpu.buckets", "Your buckets for random models on recorded clusters", points=0,
           timeout=60)
def cpu_buckets(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random clusters from seed {seed}")
    rng = random.Random(seed)
    scen = [random_cluster(rng) for _ in range(SCENARIOS)]
    scen.insert(rng.randint(0, SCENARIOS), bucket_bound_cluster(rng))
    return scen, ctx.run_cases("bucket", [c for _, c in scen])


@lab.check("cpu.bucket", "ZeRO-2's bucket: the modelled step within 2% of the best bucket's",
           points=20, kind="decision", parent="cpu.buckets")
def cpu_bucket(ctx, parent):
    scen, rows = parent
    fractions, points = [], []
    for i, ((name, case), row) in enumerate(zip(scen, rows)):
        what = f"scenario {i} ({name}, Ψ={case['params']:.3g}, N={case['ranks']}, " \
               f"free {case['free_bytes'] / 1e9:g} GB)"
        expect(f"{what}: status", row["status"], "success")
        if row["valid"] != "yes":
            ctx.log(f"{what}: your bucket {row['bucket']:.4g} is not valid: {row['why']}")
            fractions.append(0.0)
            points.append((i + 1, 0))
            continue
        ratio = row["best_step_s"] / row["step_s"]
        ctx.log(f"{what}: yours {row['bucket']:.4g} elements, step {row['step_s']:.4g} s; "
                f"best {row['best_bucket']:.4g}, {row['best_step_s']:.4g} s")
        fractions.append(round(ramp(ratio, LOW, HIGH), 4))
        points.append((i + 1, ratio))
    ctx.perf_fractions.extend(fractions)
    mean = sum(fractions) / len(fractions)
    ctx.metric("fraction", mean)
    ctx.perf_messages.append(f"your buckets: mean score {mean:.3f} over {len(rows)} clusters "
                             f"(full marks within 2% of the best step, none beyond 10%)")
    ctx.plot("lab22-buckets", {"best step / your step": points}, xlabel="scenario",
             ylabel="ratio", logx=False, title="lab22: your ZeRO-2 buckets")


# --- answers --------------------------------------------------------------------------------

@lab.check("cpu.answers", "Answers: the paper's 7.5B example and your own stage-3 run",
           points=10, backend="cpu", kind="question", parent="cpu.train")
def cpu_answers(ctx, runs):
    ans = answers.read_answers(ctx)
    zero3 = runs[4][3]
    own = zero3["peak_max"]
    ratio = zero3["sent_max"] / runs[4][0]["sent_max"] if runs[4][0]["sent_max"] else 0
    answers.score_answers(ctx, [
        answers.check_answer(ans, "paper_stage3_GB_per_gpu", lambda v: abs(v - 1.875) <= 0.05,
                             "16Ψ/N for Ψ = 7.5e9, N = 64, in GB (within 0.05)", number=True),
        answers.check_answer(ans, "zero3_bytes_over_dp", lambda v: abs(v - ratio) <= 0.01,
                             f"{ratio:.3f} (your run on 4 ranks)", number=True),
        answers.check_answer(ans, "zero3_peak_bytes_4_ranks",
                             lambda v: abs(v - own) <= 0.01 * own,
                             f"{own} (your run on 4 ranks, within 1%)", number=True)])
