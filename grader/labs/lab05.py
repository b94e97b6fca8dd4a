"""lab05: ring collectives (ReduceScatter, AllGather, AllReduce), a pipelined Broadcast, and
its chunk size: the student's decision.

The harness (common/harness/coll_suite.c) calls the student's collectives in the student's
own program, gives every call fresh inputs, checks every rank's output and records every
operation; the student's program holds no library collective to call. The driver's tune
mode (labs/lab05/harness_tune.c) measures the chain's hops, asks lab05_broadcast_chunk() for a
chunk size at each message size and runs the student's Broadcast with it, checked like every
call. Performance is a ratio measured in the same run: MPI_Allreduce and MPI_Bcast on cpu,
NCCL's AllReduce on gpu; on sim the simulator's NCCL ring, and for the Broadcast the
library's chain at the best chunk size of a fine sweep, which the student's program never
sees.
"""

import random

from gradelib import CheckFailed, Lab, perf_samples
from gradelib.answers import check_answer, read_answers, score_answers
from gradelib.collectives import bench_row, check_row, score_busbw, verify_collective

lab = Lab("lab05", title="集合通信原语 (一): ring", program="lab05",
          student_files=["labs/lab05/lab05.c", "labs/lab05/answers.txt"])

COLLECTIVES = ["reducescatter", "allgather", "allreduce", "broadcast"]
CPU_RANKS = [1, 2, 3, 4, 5, 6, 7, 8]
SIM_RANKS = [1, 2, 3, 4, 5, 6, 7, 8, 16]   # 16: two simulated DGX A100 nodes
MIB = 1 << 20


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0


# --- cpu ------------------------------------------------------------------------------

def _verify_runs(ctx, backend, ranks, timeout):
    """{ranks: the verify mode's results} for every rank count, each with the command that
    produced it, so that a failure names the run to reproduce."""
    out = {}
    for n in ranks:
        out[n] = ctx.run_lab("verify", ranks=n, backend=backend, timeout=timeout)
        out[n]["command"] = ctx.commands[-1] if ctx.commands else None
    return out


def _verify(results, name):
    for n, data in sorted(results.items()):
        try:
            verify_collective({n: data}, name)
        except CheckFailed as e:
            e.command = e.command or data.get("command")
            raise


@lab.check("cpu.verify", "Collectives verified on 1 to 8 MPI ranks", points=0, backend="cpu",
           timeout=150)
def cpu_verify(ctx):
    return _verify_runs(ctx, "cpu", CPU_RANKS, 60)


def _cpu_collective(name):
    def check(ctx, results):
        _verify(results, name)
    return check


for _name, _title, _points in (
        ("reducescatter", "Ring ReduceScatter", 15), ("allgather", "Ring AllGather", 10),
        ("allreduce", "Ring AllReduce = ReduceScatter + AllGather", 10),
        ("broadcast", "Pipelined Broadcast", 10)):
    lab.check(f"cpu.{_name}", f"{_title}: exact on uneven counts, 4 types, 4 ops, 1-8 ranks",
              points=_points, backend="cpu", parent="cpu.verify")(_cpu_collective(_name))


@lab.check("cpu.perf", "AllReduce busbw vs MPI_Allreduce (2 ranks, 64 MiB)", points=15,
           backend="cpu", kind="performance", timeout=120, parent="cpu.verify")
def cpu_perf(ctx, _):
    data = ctx.run_lab("bench", ["--coll", "allreduce", "--bytes", "64M", "--repeats", "7"],
                       ranks=2, backend="cpu", timeout=90)
    score_busbw(ctx, bench_row(data), low=0.8, high=0.9)
    sweep = ctx.run_lab("sweep", ["--coll", "allreduce", "-b", "4K", "-e", "16M", "-f", "8",
                                  "--repeats", "3"], ranks=2, backend="cpu", timeout=60)
    rows = sweep["rows"]
    ctx.plot("lab05-cpu", {
        "your ring AllReduce": [(r["size"], _median(r["busbw"])) for r in rows],
        "MPI_Allreduce": [(r["size"], _median(r["base_busbw"])) for r in rows]},
        xlabel="message size (bytes)", ylabel="busbw (GB/s)", title="lab05 AllReduce, 2 MPI ranks")


@lab.check("cpu.chunk", "Your chunk size on 2 MPI ranks: Broadcast busbw vs MPI_Bcast (64 MiB)",
           points=5, backend="cpu", kind="performance", timeout=90, parent="cpu.verify")
def cpu_chunk(ctx, _):
    """Two ranks have no chain to fill: the model says one chunk, and every extra message
    costs a latency. On shared memory that cost is small, so the ramp is wide: it catches
    a choice that cuts the message into crumbs, not a choice of 256 KiB over 64 MiB."""
    data = ctx.run_lab("tune", ["-b", "64M", "-e", "64M", "--repeats", "5"], ranks=2,
                       backend="cpu", timeout=80)
    score_busbw(ctx, bench_row(data), low=0.4, high=0.7, name="Broadcast busbw")


# --- sim ------------------------------------------------------------------------------

@lab.check("sim.verify", "Collectives verified on simulated DGX A100 (1-8 and 16 ranks)",
           points=0, backend="sim", timeout=90)
def sim_verify(ctx):
    return _verify_runs(ctx, "sim", SIM_RANKS, 40)


@lab.check("sim.correct", "All four collectives exact on the simulator", points=10,
           backend="sim", parent="sim.verify")
def sim_correct(ctx, results):
    for name in COLLECTIVES:
        _verify(results, name)


@lab.check("sim.perf", "Simulated AllReduce busbw within 5% of NCCL's ring (DGX A100, 8 GPUs)",
           points=10, backend="sim", kind="performance", timeout=60, parent="sim.verify")
def sim_perf(ctx, _):
    data = ctx.run_lab("sweep", ["--coll", "allreduce", "-b", "1K", "-e", "64M", "-f", "4",
                                 "--repeats", "1"], ranks=8, backend="sim", timeout=50)
    rows = data["rows"]
    for r in rows:
        bench_row({"rows": [r]})      # every simulated call was checked too
    ctx.plot("lab05-sim", {f"allreduce ({who})": [(r["size"], r[key][0]) for r in rows]
                           for who, key in (("yours", "busbw"), ("NCCL's ring", "base_busbw"))},
             xlabel="message size (bytes)", ylabel="busbw (GB/s)",
             title="lab05 AllReduce on a simulated DGX A100 (8 GPUs)")
    # Simulated time is deterministic: one sample per size is exact.
    for r in rows:
        if r["size"] in (MIB, 16 * MIB, 64 * MIB):
            perf_samples(ctx, student=r["busbw"], baseline=r["base_busbw"], low=0.90, high=0.95,
                         name=f"allreduce busbw at {r['size'] >> 20} MiB")


def _tune_rows(data, ranks):
    """The tune mode's rows, each checked like a collective call."""
    rows = data["rows"]
    if not rows:
        raise CheckFailed("the tune mode produced no row", expected="a row per size",
                          found="none")
    for r in rows:
        check_row(r, ranks)
        if r.get("base_wrong"):
            raise CheckFailed("the library's chain gave wrong data (a harness problem)",
                              expected="0", found=str(r["base_wrong"]))
    return rows


@lab.check("sim.chunk", "Your chunk size: simulated Broadcast busbw vs the best chunk "
           "(1 and 2 DGX A100)", points=20, backend="sim", kind="performance", timeout=60,
           parent="sim.verify")
def sim_chunk(ctx, _):
    """Sizes, rank counts, element type and roots are drawn afresh for every run (the seed
    is in the command, so a failure can be replayed), so no table of answers can pass."""
    rng = random.SystemRandom()
    first = rng.randrange(192 << 10, 512 << 10)
    dtype = rng.choice(["float", "double"])
    series = {}
    for ranks in (rng.randint(4, 8), rng.randint(10, 16)):
        data = ctx.run_lab("tune", ["-b", str(first), "-e", "256M", "-f", "8", "--dtype", dtype,
                                    "--seed", str(rng.randrange(1, 1 << 30))],
                           ranks=ranks, backend="sim", timeout=25, name=f"tune-{ranks}.json")
        rows = _tune_rows(data, ranks)
        series[f"yours, {ranks} GPUs"] = [(r["size"], r["busbw"][0]) for r in rows]
        series[f"best chunk, {ranks} GPUs"] = [(r["size"], r["base_busbw"][0]) for r in rows]
        for r in rows:
            perf_samples(ctx, student=r["busbw"], baseline=r["base_busbw"], low=0.80, high=0.95,
                         name=f"broadcast busbw, {ranks} ranks, {r['size']} B, chunk "
                              f"{r['chunk']} (best {r['base_chunk']})")
    ctx.plot("lab05-chunk", series, xlabel="message size (bytes)", ylabel="busbw (GB/s)",
             title="lab05 pipelined Broadcast on simulated DGX A100")


@lab.check("sim.answers", "思考: the ring's cost model and what pipelining buys (answers.txt)",
           points=5, backend="sim", kind="performance", timeout=40, parent="sim.verify")
def sim_answers(ctx, _):
    """Each answer against the grader's own run of the student's code (deterministic on sim)
    or the model with the harness's measured hop; a run that fails makes its answer wrong."""
    ans, results = read_answers(ctx), []

    def close(key, measure, rel, fmt):
        try:
            want = measure()
        except CheckFailed as e:
            results.append((key, False, f"a run of your code ({e})", "-"))
            return
        results.append(check_answer(ans, key, lambda v: abs(v / want - 1) <= rel,
                                    f"{want:{fmt}} (within {rel:.0%})", number=True))

    def model_us():
        data = ctx.run_lab("tune", ["-b", "64M", "-e", "64M", "--seed", "1"], ranks=8,
                           backend="sim", timeout=10, name="answers-tune-8.json")
        alpha_us, gbps = _hop(data, 0)
        p, size = 8, 64 * MIB
        return 2 * (p - 1) * (alpha_us + size / p / (gbps * 1e3))   # GB/s = 1e3 B/us

    def sim_us():
        data = ctx.run_lab("bench", ["--coll", "allreduce", "--bytes", "64M", "--repeats", "1"],
                           ranks=8, backend="sim", timeout=10, name="answers-bench-8.json")
        return bench_row(data)["time"][0]

    def speedup():
        data = ctx.run_lab("tune", ["-b", "256M", "-e", "256M", "--seed", "1"], ranks=16,
                           backend="sim", timeout=10, name="answers-tune-16.json")
        row = _tune_rows(data, 16)[0]
        return row["unpipelined_time"] / row["time"][0]

    close("allreduce_model_us", model_us, 0.03, ".1f")
    close("allreduce_sim_us", sim_us, 0.02, ".1f")
    close("pipeline_speedup_16", speedup, 0.03, ".2f")
    score_answers(ctx, results)


def _hop(data, i):
    """(alpha in us, bandwidth in GB/s) of hop i from the tune mode's header."""
    text = data.get(f"hop{i}", "")
    try:
        alpha = float(text.split(":")[1].split("us")[0])
        gbps = float(text.split(",")[1].split("GB/s")[0])
    except (IndexError, ValueError):
        raise CheckFailed("the tune mode did not report its hops", expected="hop0: ...",
                          found=text or "nothing") from None
    return alpha, gbps


# --- gpu ------------------------------------------------------------------------------

@lab.check("gpu.one", "Collectives and ncclAllReduce on one GPU (one process, no launcher)",
           points=0, backend="gpu", needs={"gpus": 1}, timeout=150)
def gpu_one(ctx):
    """One GPU is enough to run the whole gpu path: device buffers behind handles, the
    harness's uploads and checks, the student's program, and NCCL's AllReduce."""
    res = {1: ctx.run_lab("verify", backend="gpu", timeout=80)}
    for name in COLLECTIVES:
        verify_collective(res, name)
    data = ctx.run_lab("bench", ["--coll", "allreduce", "--bytes", "64M", "--repeats", "3"],
                       backend="gpu", timeout=60)
    row = bench_row(data)
    # One rank moves nothing between GPUs (busbw is 0 by nccl-tests' formula): the times
    # say that the student's copy and ncclAllReduce ran, and how long each took.
    ctx.metric("time_us", _median(row["time"]))
    ctx.metric("nccl_time_us", _median(row["base_time"]))


@lab.check("gpu.verify", "Collectives verified on 2 GPUs with NCCL send/recv", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=120)
def gpu_verify(ctx):
    res = {2: ctx.run_lab("verify", ranks=2, backend="gpu", timeout=100)}
    for name in COLLECTIVES:
        verify_collective(res, name)


@lab.check("gpu.perf", "AllReduce busbw vs ncclAllReduce (2 GPUs, 64 MiB)", points=10,
           backend="gpu", needs={"gpus": 2}, kind="performance", timeout=120,
           parent="gpu.verify")
def gpu_perf(ctx, _):
    data = ctx.run_lab("bench", ["--coll", "allreduce", "--bytes", "64M", "--repeats", "7"],
                       ranks=2, backend="gpu", timeout=100)
    score_busbw(ctx, bench_row(data), low=0.6, high=0.8)
