"""lab05: ring collectives (ReduceScatter, AllGather, AllReduce, pipelined Broadcast).

The harness (common/harness/coll_suite.c) calls the student's collectives in the student's
own program, gives every call fresh inputs, checks every rank's output and records every
operation; the student's program holds no library collective to call. Performance is a
ratio measured in the same run: MPI_Allreduce on cpu, NCCL's on gpu, and on sim the
simulator's NCCL ring and chain run over the same interface.
"""

from gradelib import Lab, perf_samples
from gradelib.collectives import bench_row, score_busbw, verify_collective

lab = Lab("lab05", title="集合通信原语 (一): ring", program="lab05")

COLLECTIVES = ["reducescatter", "allgather", "allreduce", "broadcast"]
CPU_RANKS = [1, 2, 3, 4, 5, 6, 7, 8]
SIM_RANKS = [1, 2, 3, 4, 5, 6, 7, 8, 16]   # 16: two simulated DGX A100 nodes
MIB = 1 << 20


# --- cpu ------------------------------------------------------------------------------

@lab.check("cpu.verify", "Collectives verified on 1 to 8 MPI ranks", points=0, backend="cpu",
           timeout=150)
def cpu_verify(ctx):
    return {n: ctx.run_lab("verify", ranks=n, backend="cpu", timeout=60) for n in CPU_RANKS}


def _cpu_collective(name):
    def check(ctx, results):
        verify_collective(results, name)
    return check


for _name, _title, _points in (
        ("reducescatter", "Ring ReduceScatter", 15), ("allgather", "Ring AllGather", 10),
        ("allreduce", "Ring AllReduce = ReduceScatter + AllGather", 10),
        ("broadcast", "Pipelined Broadcast", 10)):
    lab.check(f"cpu.{_name}", f"{_title}: exact on uneven counts, 4 types, 4 ops, 1-8 ranks",
              points=_points, backend="cpu", parent="cpu.verify")(_cpu_collective(_name))


@lab.check("cpu.perf", "AllReduce busbw vs MPI_Allreduce (2 ranks, 64 MiB)", points=20,
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


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0


# --- sim ------------------------------------------------------------------------------

@lab.check("sim.verify", "Collectives verified on simulated DGX A100 (1-8 and 16 ranks)",
           points=0, backend="sim", timeout=90)
def sim_verify(ctx):
    return {n: ctx.run_lab("verify", ranks=n, backend="sim", timeout=40) for n in SIM_RANKS}


@lab.check("sim.correct", "All four collectives exact on the simulator", points=10,
           backend="sim", parent="sim.verify")
def sim_correct(ctx, results):
    for name in COLLECTIVES:
        verify_collective(results, name)


@lab.check("sim.perf", "Simulated busbw within 5% of the reference (DGX A100, 8 GPUs)",
           points=15, backend="sim", kind="performance", timeout=90, parent="sim.verify")
def sim_perf(ctx, _):
    data = ctx.run_lab("sweep", ["--coll", "allreduce,broadcast", "-b", "1K", "-e", "64M",
                                 "-f", "4", "--repeats", "1"], ranks=8, backend="sim",
                       timeout=60)
    rows = data["rows"]
    for r in rows:
        bench_row({"rows": [r]})      # every simulated call was checked too
    ctx.plot("lab05-sim", {f"{n} ({who})": [(r["size"], r[key][0]) for r in rows
                                            if r["name"] == n]
                           for n in ("allreduce", "broadcast")
                           for who, key in (("yours", "busbw"), ("NCCL's", "base_busbw"))},
             xlabel="message size (bytes)", ylabel="busbw (GB/s)",
             title="lab05 on a simulated DGX A100 (8 GPUs)")
    # Simulated time is deterministic: one sample per size is exact.
    for r in rows:
        if r["size"] in (MIB, 16 * MIB, 64 * MIB):
            perf_samples(ctx, student=r["busbw"], baseline=r["base_busbw"], low=0.90, high=0.95,
                         name=f"{r['name']} busbw at {r['size'] >> 20} MiB")


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
