"""lab26: pipeline parallelism over point-to-point transfers: the 1F1B schedule.

One stage per rank. The student's schedule decides the order of each stage's forwards and
backwards and moves activations and gradients between neighbours; the stage's computation is
the harness's own operation (labs/lab26/harness_stage.c), which checks that every input is exactly
the one sequential execution would give, counts the activations in flight, and records the
start and end of every operation on the rank's clock. The bubble is measured from that
timeline: on sim in virtual time, so it is exact and needs no machine to itself.
"""

from gradelib import CheckFailed, Lab
from gradelib.gantt import gantt
from gradelib.perf import ramp

lab = Lab("lab26", title="流水线并行 P2P: the 1F1B schedule", program="lab26")

CPU_RUNS = [(2, 8), (3, 8), (4, 8), (4, 3)]           # (stages, micro-batches)
SIM_RUNS = [(4, 8), (8, 16), (8, 4), (4, 1), (16, 32)]
INTERLEAVED_RUNS = [(4, 8, 2), (4, 8, 4), (8, 16, 2), (3, 6, 3)]   # (stages, micro-batches, chunks)
BUBBLE_SLACK = 0.05     # the bubble may exceed (p-1)/(m+p-1) by 5% of it


def _runs(ctx, backend, runs):
    out = {}
    for p, m in runs:
        out[(p, m)] = ctx.run_lab("run", ["--micro-batches", m], ranks=p, backend=backend,
                                  timeout=25, name=f"run-{backend}-{p}x{m}.json")
    return out


def check_complete(results):
    for key, data in results.items():
        p, m = key[0], key[1]
        label = f"{p} stages, {m} micro-batches" + (f", {key[2]} chunks" if len(key) > 2 else "")
        m *= key[2] if len(key) > 2 else 1     # every chunk of every micro-batch
        if data.get("failed_stages"):
            raise CheckFailed(f"{label}: your schedule failed on {data['failed_stages']} "
                              "stage(s)", expected="every stage returns success",
                              found=data.get("error", "an error"))
        for row in data["rows"]:
            if row["forwards"] != m or row["backwards"] != m or row["errors"]:
                raise CheckFailed(f"{label}: stage {row['stage']} did not run every micro-batch "
                                  "once, with the inputs of sequential execution",
                                  expected=f"{m} forwards and {m} backwards, no error",
                                  found=f"{row['forwards']} forwards, {row['backwards']} "
                                  f"backwards, {row['errors']} error(s)")


def check_memory(results):
    check_complete(results)
    for key, data in results.items():
        for row in data["rows"]:
            if row["max_in_flight"] > row["limit"]:
                raise CheckFailed(f"{key[0]} stages, {key[1]} micro-batches: stage {row['stage']} "
                                  "keeps too many activations alive (forwarded, not yet "
                                  "backwarded)", expected=f"at most {row['limit']}",
                                  found=str(row["max_in_flight"]))


@lab.check("cpu.run", "Your schedule on 2, 3 and 4 MPI ranks (one stage each)", points=0,
           backend="cpu", timeout=120)
def cpu_run(ctx):
    return _runs(ctx, "cpu", CPU_RUNS)


@lab.check("cpu.correct", "Every micro-batch forward and backward once, inputs as sequential "
           "execution, no deadlock", points=25, backend="cpu", parent="cpu.run")
def cpu_correct(ctx, results):
    check_complete(results)


@lab.check("cpu.memory", "At most p - s activations in flight on stage s (1F1B, not GPipe)",
           points=15, backend="cpu", parent="cpu.run")
def cpu_memory(ctx, results):
    check_memory(results)


@lab.check("sim.run", "Your schedule on 4 to 16 simulated DGX A100 GPUs", points=0,
           backend="sim", timeout=90)
def sim_run(ctx):
    return _runs(ctx, "sim", SIM_RUNS)


@lab.check("sim.correct", "Sequential results and the 1F1B memory bound on the simulator",
           points=20, backend="sim", parent="sim.run")
def sim_correct(ctx, results):
    check_memory(results)


@lab.check("sim.bubble", "The bubble within 5% of (p-1)/(m+p-1), from your own timeline",
           points=30, backend="sim", kind="performance", parent="sim.run")
def sim_bubble(ctx, results):
    check_memory(results)
    score_bubbles(ctx, results)
    draw(ctx, results[SIM_RUNS[0]], "lab26-schedule", "your schedule")


def score_bubbles(ctx, results):
    for key, data in results.items():
        p, m = key[0], key[1]
        bubble, ideal = data["bubble"], data["ideal_bubble"]
        ctx.log(f"{p} stages, {m} micro-batches, {data.get('chunks', 1)} chunk(s): bubble "
                f"{bubble:.4f}, ideal {ideal:.4f}")
        ctx.metric("bubble-" + "x".join(str(x) for x in key), round(bubble, 4))
        # full marks up to 5% above the bound, none at 50% above it
        ctx.perf_fractions.append(round(ramp(ideal / bubble if bubble > 0 else 0, 1 / 1.5,
                                             1 / (1 + BUBBLE_SLACK)), 4))


def draw(ctx, data, name, what):
    bars = []
    chunks = data.get("chunks", 1)
    for row in data["rows"]:
        for back, mb, k, t0, t1 in zip(row["op_backward"], row["op_micro_batch"],
                                       row["op_chunk"], row["op_start_s"], row["op_end_s"]):
            kind = ("backward" if back else "forward") + (f" chunk {k}" if chunks > 1 else "")
            bars.append((row["stage"], t0 * 1e3, t1 * 1e3, kind, str(mb)))
    gantt(ctx, name, bars, title=f"lab26: {what}, {data['stages']} stages, "
          f"{data['micro_batches']} micro-batches (simulated)")


@lab.check("sim.interleaved", "Stretch: interleaved 1F1B, bubble within 5% of "
           "(p-1)/(vm+p-1)", points=10, backend="sim", kind="performance", timeout=90)
def sim_interleaved(ctx):
    results = {}
    for p, m, v in INTERLEAVED_RUNS:
        results[(p, m, v)] = ctx.run_lab("run", ["--micro-batches", m, "--chunks", v], ranks=p,
                                         backend="sim", timeout=25,
                                         name=f"run-sim-{p}x{m}x{v}.json")
    check_memory(results)
    score_bubbles(ctx, results)
    draw(ctx, results[INTERLEAVED_RUNS[0]], "lab26-interleaved", "your interleaved schedule")
