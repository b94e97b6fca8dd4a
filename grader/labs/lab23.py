"""lab23: sequence parallelism around a tensor-parallel MLP block.

The student writes the sequence-parallel forward and backward of the block (LayerNorm and
dropout on a sequence shard, an AllGather into the tensor-parallel region and a
ReduceScatter out of it, and the conjugates in backward), then the activation accounting of
Korthikanti et al. (Table 2), a step-time model and a plan (sequence parallelism and
recomputation) for a real model. The harness (labs/lab23/harness_block.c) runs the given
tensor-parallel block and the student's, alternately, on fresh inputs; checks every output
against a double-precision reference of the whole block; and measures from its side the
activation memory each keeps (its record of every cl_mem_alloc), the bytes each sends (the
trace) and its time.
"""

import math
import random
import statistics

from gradelib import CheckFailed, Lab, expect, expect_close, perf_samples
from gradelib.answers import check_answer, read_answers, score_answers

lab = Lab("lab23", title="序列并行", program="lab23",
          student_files=["labs/lab23/lab23.c", "labs/lab23/answers.txt"])

SHAPE = dict(seq=128, batch=2, hidden=128, ffn=512)   # the driver's defaults
OWN_MEMORY_KIB = 64          # the program's own memory may grow this much during forward
# Full marks when the sequence-parallel step is within 1.1 x the tensor-parallel one (they
# do the same matrix products; SP does LayerNorm and dropout on 1/t of the rows); none from
# 1.3 x: recomputing the forward in backward costs a third more.
HIGH, LOW = 1 / 1.1, 1 / 1.3


# --- the block: what the handout's accounting allows ---------------------------------------

def sp_saved_bound(t, seq=SHAPE["seq"], batch=SHAPE["batch"], hidden=SHAPE["hidden"],
                   ffn=SHAPE["ffn"]):
    """Bytes sequence parallelism needs to keep: X and Z of this rank's rows, U and V of every
    row for this rank's f/t columns (section 3 of the handout), floats."""
    rows = seq * batch
    return 4 * (2 * rows // t * hidden + 2 * rows * (ffn // t))


def ring_bytes(n_floats, t, steps_per_block):
    """Upper bound of the bytes one rank sends in a ring over t ranks that moves each of
    the rank's blocks steps_per_block times: (t - 1) x steps x ceil(n / t) floats."""
    return 4 * steps_per_block * (t - 1) * math.ceil(n_floats / t)


def comm_bounds(t, seq=SHAPE["seq"], batch=SHAPE["batch"], hidden=SHAPE["hidden"]):
    """(forward, backward) bytes a rank may send: forward an AllGather and a ReduceScatter of
    the activations, as much as tensor parallelism's one AllReduce; backward their
    conjugates, one AllGather of Z again and the AllReduce of LayerNorm's 2h gradients."""
    n = seq * batch * hidden
    ag = ring_bytes(n, t, 1)
    return 2 * ag, 3 * ag + 2 * ring_bytes(hidden, t, 2)


# --- the model, written again from the handout (section 4) ----------------------------------

NO_RECOMPUTE, SELECTIVE = 0, 1


def layer_bytes(m, sp, g):
    s, b, h, a, t = m["seq"], m["batch"], m["hidden"], m["heads"], m["t"]
    rest = 34 / t if sp else 10 + 24 / t
    attention = 0 if g == SELECTIVE else 5 * a * s / (h * t)
    return s * b * h * (rest + attention)


def full_bytes(m, sp):
    return 2 * m["seq"] * m["batch"] * m["hidden"] / (m["t"] if sp else 1)


def memory_bytes(m, sp, g, n):
    out = (m["states_gb"] * 1e9 + (m["layers"] - n) * layer_bytes(m, sp, g)
           + n * full_bytes(m, sp))
    return out + (layer_bytes(m, sp, NO_RECOMPUTE) if n > 0 else 0)


def step_s(m, sp, g, n):
    s, b, h, t = m["seq"], m["batch"], m["hidden"], m["t"]
    x, bw = m["tflops"] * 1e12, m["busbw_gbps"] * 1e9
    fwd = 24 * b * s * h * h + 4 * b * s * s * h
    core = 4 * b * s * s * h
    comm = 2 * (2 * (t - 1) / t) * (2 * s * b * h) / bw if t > 1 else 0
    plain = 3 * fwd / (t * x) + 2 * comm
    layer = plain + core / (t * x) if g == SELECTIVE else plain
    full = 4 * fwd / (t * x) + 3 * comm
    return (m["layers"] - n) * layer + n * full


def best_plan(m):
    """(seconds, (sp, granularity, full_layers)) of the fastest plan that fits, or None."""
    best = None
    for sp in (0, 1):
        for g in (NO_RECOMPUTE, SELECTIVE):
            for n in range(int(m["layers"]) + 1):
                if memory_bytes(m, sp, g, n) <= m["memory_gb"] * 1e9:
                    s = step_s(m, sp, g, n)
                    if best is None or s < best[0]:
                        best = (s, (sp, g, n))
    return best


# GPT-3 175B's shape (Brown et al. 2020) with t = 8 on 80 GB GPUs; the first pipeline stage of
# a 1F1B schedule holds as many layers' activations as the model has (Korthikanti et al. 2022).
GPT3_175B = dict(seq=2048, batch=1, hidden=12288, heads=96, layers=96, t=8, tflops=150,
                 busbw_gbps=200, memory_gb=80, states_gb=49.2)


def random_model(rng):
    h = 128 * rng.randint(8, 128)
    m = dict(seq=rng.choice([1024, 2048, 4096, 8192]), batch=rng.choice([1, 2, 4]), hidden=h,
             heads=h // 128, layers=rng.randint(4, 96), t=rng.choice([1, 2, 4, 8]),
             tflops=rng.uniform(100, 400), busbw_gbps=rng.uniform(40, 400),
             memory_gb=rng.choice([40, 80, 141]))
    # states from a tenth to nearly all of the memory: some plans fit easily, some need
    # recomputation, some fit nowhere
    m["states_gb"] = round(m["memory_gb"] * rng.uniform(0.1, 0.97), 3)
    return m


def case_of(m, rng):
    case = dict(m)
    case.update(sp=rng.randint(0, 1), granularity=rng.randint(0, 1),
                full_layers=rng.randint(0, int(m["layers"])))
    return case


# --- checks ------------------------------------------------------------------------------------

@lab.check("cpu.block", "The block runs on 2 and 4 MPI ranks", points=0, timeout=150,
           timed=True)
def cpu_block(ctx):
    return {2: ctx.run_lab("block", ["--repeats", "7"], ranks=2, backend="cpu"),
            4: ctx.run_lab("block", ["--repeats", "2"], ranks=4, backend="cpu")}


def rows_of(data):
    return {r["impl"]: r for r in data["rows"]}


def ran(row, what, which):
    if row[f"{which}_failed"]:
        raise CheckFailed(f"{what}: your {which}ward failed on {row[f'{which}_failed']} call(s)",
                          expected="it returns CL_OK", found=row[f"{which}_error"] or "a failure")


@lab.check("cpu.forward", "Forward: sequence-parallel output equals the block's", points=15,
           parent="cpu.block")
def cpu_forward(ctx, runs):
    for t, data in runs.items():
        sp = rows_of(data)["sp"]
        what = f"{t} ranks"
        ran(sp, what, "fwd")
        expect(f"{what}: elements of Y farther than 1e-3 from the reference", sp["wrong_y"], 0)
        expect(f"{what}: elements of your inputs or parameters your code changed",
               sp["input_changed"], 0)


@lab.check("cpu.backward", "Backward: every gradient equals the block's", points=20,
           parent="cpu.block")
def cpu_backward(ctx, runs):
    for t, data in runs.items():
        sp = rows_of(data)["sp"]
        what = f"{t} ranks"
        ran(sp, what, "fwd")
        ran(sp, what, "bwd")
        for key, name in (("wrong_dx", "dX"), ("wrong_da", "dA (your columns)"),
                          ("wrong_db", "dB (your rows)"),
                          ("wrong_dgamma", "dgamma (over every row of the batch)"),
                          ("wrong_dbeta", "dbeta (over every row of the batch)")):
            expect(f"{what}: elements of {name} farther than 1e-3 from the reference",
                   sp[key], 0)
        if sp["leaked_bytes"]:
            raise CheckFailed(f"{what}: backward left buffers allocated",
                              expected="every saved buffer freed", found=f"{sp['leaked_bytes']} bytes")


@lab.check("cpu.comm", "Communication: ReduceScatter + AllGather, no more than TP's AllReduce",
           points=10, parent="cpu.block")
def cpu_comm(ctx, runs):
    for t, data in runs.items():
        rows = rows_of(data)
        sp, tp = rows["sp"], rows["tp"]
        ran(sp, f"{t} ranks", "fwd")
        ran(sp, f"{t} ranks", "bwd")
        fwd, bwd = comm_bounds(t)
        ctx.metric(f"sent_bytes_{t}", {"tp": [tp["fwd_sent_bytes"], tp["bwd_sent_bytes"]],
                                       "sp": [sp["fwd_sent_bytes"], sp["bwd_sent_bytes"]]})
        if sp["fwd_sent_bytes"] > fwd:
            raise CheckFailed(f"{t} ranks: your forward sends more than an AllGather and a "
                              f"ReduceScatter of the activations (an AllReduce, then a slice?)",
                              expected=f"at most {fwd} bytes (TP's AllReduce sends "
                                       f"{tp['fwd_sent_bytes']})",
                              found=f"{sp['fwd_sent_bytes']} bytes")
        if sp["bwd_sent_bytes"] > bwd:
            raise CheckFailed(f"{t} ranks: your backward sends more than its conjugate "
                              f"collectives, one AllGather of Z and LayerNorm's gradients",
                              expected=f"at most {bwd} bytes", found=f"{sp['bwd_sent_bytes']} bytes")


@lab.check("cpu.memory", "Activation memory: 1/t of the LayerNorm and dropout regions",
           points=15, parent="cpu.block")
def cpu_memory(ctx, runs):
    for t, data in runs.items():
        rows = rows_of(data)
        sp, tp = rows["sp"], rows["tp"]
        ran(sp, f"{t} ranks", "fwd")
        bound = sp_saved_bound(t)
        ctx.metric(f"saved_bytes_{t}", {"tp": tp["saved_bytes"], "sp": sp["saved_bytes"]})
        if sp["own_memory_kib"] > OWN_MEMORY_KIB:
            raise CheckFailed(f"{t} ranks: your program's own memory (malloc, static arrays) grew "
                              f"during forward: activations belong in cl_mem_alloc buffers",
                              expected=f"at most {OWN_MEMORY_KIB} KiB",
                              found=f"{sp['own_memory_kib']:.0f} KiB")
        if sp["saved_bytes"] > bound:
            raise CheckFailed(f"{t} ranks: your forward keeps more than sequence parallelism needs",
                              expected=f"at most {bound} bytes (tensor parallelism keeps "
                                       f"{tp['saved_bytes']})",
                              found=f"{sp['saved_bytes']} bytes")


@lab.check("cpu.perf", "SP step time <= 1.1 x TP's (no recomputation to save memory)",
           points=10, kind="performance", parent="cpu.block")
def cpu_perf(ctx, runs):
    rows = rows_of(runs[2])
    # Recomputing a GEMM costs less than this machine's timing noise; the given
    # lab23_matmul's count of multiply-adds shows it on every run.
    for part in ("fwd", "bwd"):
        sp, tp = rows["sp"][f"{part}_macs"], rows["tp"][f"{part}_macs"]
        ctx.metric(f"{part}_macs", {"sp": sp, "tp": tp})
        if sp > tp:
            raise CheckFailed(f"your {'forward' if part == 'fwd' else 'backward'} multiplies more "
                              f"than TP's: recomputation where memory was not short",
                              expected=f"at most TP's {tp} multiply-adds in lab23_matmul",
                              found=f"{sp}")
    perf_samples(ctx, student=rows["sp"]["step_s"], baseline=rows["tp"]["step_s"],
                 higher_is_better=False, low=LOW, high=HIGH, unit="s",
                 name="sequence-parallel step vs tensor-parallel step")


@lab.check("cpu.model", "Model: activation bytes (Table 2), memory and step time", points=15)
def cpu_model(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random models from seed {seed}")
    rng = random.Random(seed)
    models = [GPT3_175B] + [random_model(rng) for _ in range(29)]
    cases = [case_of(m, rng) for m in models]
    rows = ctx.run_cases("model", cases)
    for i, (case, row) in enumerate(zip(cases, rows)):
        expect(f"case {i}: status", row["status"], "success")
        what = (f"case {i} (s={case['seq']}, b={case['batch']}, h={case['hidden']}, "
                f"a={case['heads']}, t={case['t']})")
        for key, sp, g in (("tp_bytes", 0, NO_RECOMPUTE), ("tp_selective_bytes", 0, SELECTIVE),
                           ("sp_bytes", 1, NO_RECOMPUTE), ("sp_selective_bytes", 1, SELECTIVE)):
            expect_close(f"{what}: {key} of one layer", row[key], layer_bytes(case, sp, g),
                         rel=1e-9)
        plan = (case["sp"], case["granularity"], case["full_layers"])
        expect_close(f"{what}: memory under plan {plan} (bytes)", row["memory_bytes"],
                     memory_bytes(case, *plan), rel=1e-9)
        expect_close(f"{what}: step under plan {plan} (s)", row["step_s"], step_s(case, *plan),
                     rel=1e-9)
    ctx.metric("cases", len(rows))
    return models, rows


@lab.check("cpu.plan", "Your plan: the fastest that fits (within 0.5%)", points=10,
           parent="cpu.model")
def cpu_plan(ctx, parent):
    models, rows = parent
    fits = 0
    for i, (m, row) in enumerate(zip(models, rows)):
        best = best_plan(m)
        if best is None:
            if row["plan_status"] == "success":
                raise CheckFailed(f"case {i}: no plan fits in {m['memory_gb']} GB, yet yours "
                                  f"says it does", expected="a failure with a reason",
                                  found="success")
            continue
        fits += 1
        expect(f"case {i}: status of your plan", row["plan_status"], "success")
        mine = (row["plan_sp"], row["plan_granularity"], row["plan_full_layers"])
        if mine[0] not in (0, 1) or mine[1] not in (0, 1) or not 0 <= mine[2] <= m["layers"]:
            raise CheckFailed(f"case {i}: your plan is outside the rules",
                              expected=f"sp 0/1, granularity 0/1, 0..{m['layers']} full layers",
                              found=str(mine))
        used = memory_bytes(m, *mine)
        if used > m["memory_gb"] * 1e9:
            raise CheckFailed(f"case {i}: your plan {mine} does not fit",
                              expected=f"at most {m['memory_gb']} GB",
                              found=f"{used / 1e9:.2f} GB")
        t = step_s(m, *mine)
        if t > 1.005 * best[0]:
            raise CheckFailed(f"case {i} (t={m['t']}, {m['layers']} layers, "
                              f"{m['memory_gb']} GB): a faster plan fits",
                              expected=f"{best[0] * 1e3:.3f} ms with {best[1]}",
                              found=f"{t * 1e3:.3f} ms with {mine}")
    ctx.metric("cases_that_fit", fits)


@lab.check("cpu.answers", "Answers: memory at 4 ranks, LayerNorm's gradients under TP",
           points=5, kind="performance", parent="cpu.block")
def cpu_answers(ctx, runs):
    ans = read_answers(ctx)
    rows = rows_of(runs[4])
    ratio = rows["sp"]["saved_bytes"] / rows["tp"]["saved_bytes"]
    ctx.metric("sp_over_tp_saved_t4", ratio)
    score_answers(ctx, [
        check_answer(ans, "sp_over_tp_saved_t4", lambda v: abs(v - ratio) <= 0.02 * ratio,
                     f"{ratio:.3f} from your own run, within 2%", number=True),
        check_answer(ans, "tp_needs_layernorm_allreduce", lambda v: v.lower() == "no", "no")])
