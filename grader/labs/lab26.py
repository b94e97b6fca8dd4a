"""lab26: pipeline parallelism over point-to-point transfers: the 1F1B schedule.

One stage per rank. The student's schedule decides the order of each stage's forwards and
backwards and moves activations and gradients between neighbours; the stage's computation is
the harness's own operation (labs/lab26/driver.c), which checks that every input is exactly
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
BUBBLE_SLACK = 0.05     # the bubble may exceed (p-1)/(m+p-1) by 5% of it


def _runs(ctx, backend, runs):
    out = {}
    for p, m in runs:
        out[(p, m)] = ctx.run_lab("run", ["--micro-batches", m], ranks=p, backend=backend,
                                  timeout=25, name=f"run-{backend}-{p}x{m}.json")
    return out


def check_complete(results):
    for (p, m), data in results.items():
        label = f"{p} stages, {m} micro-batches"
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
    for (p, m), data in results.items():
        for row in data["rows"]:
            if row["max_in_flight"] > row["limit"]:
                raise CheckFailed(f"{p} stages, {m} micro-batches: stage {row['stage']} keeps "
                                  "too many activations alive (forwarded, not yet backwarded)",
                                  expected=f"at most min(m, p - s) = {row['limit']}",
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
           points=40, backend="sim", kind="performance", parent="sim.run")
def sim_bubble(ctx, results):
    check_memory(results)
    for (p, m), data in results.items():
        bubble, ideal = data["bubble"], data["ideal_bubble"]
        ctx.log(f"{p} stages, {m} micro-batches: bubble {bubble:.4f}, (p-1)/(m+p-1) = "
                f"{ideal:.4f}")
        ctx.metric(f"bubble-{p}x{m}", round(bubble, 4))
        # full marks up to 5% above the bound, none at 50% above it
        ctx.perf_fractions.append(round(ramp(ideal / bubble if bubble > 0 else 0, 1 / 1.5,
                                             1 / (1 + BUBBLE_SLACK)), 4))
    p, m = SIM_RUNS[0]
    bars = []
    for row in results[(p, m)]["rows"]:
        for back, mb, t0, t1 in zip(row["op_backward"], row["op_micro_batch"], row["op_start_s"],
                                    row["op_end_s"]):
            bars.append((row["stage"], t0 * 1e3, t1 * 1e3, "backward" if back else "forward",
                         str(mb)))
    gantt(ctx, "lab26-schedule", bars, title=f"lab26: your schedule, {p} stages, {m} "
          "micro-batches (simulated)")
