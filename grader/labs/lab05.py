"""lab05: ring collectives (ReduceScatter, AllGather, AllReduce, pipelined Broadcast).

The driver (common/collective.c) verifies every rank's output on fresh random data
for every sample and reports wrong elements; the grader reads its JSON. Performance
is always a ratio measured in the same run: MPI_Allreduce on cpu, the simulator's
own ring AllReduce and pipelined chain Broadcast on sim, ncclAllReduce on gpu.
"""

from gradelib import CheckFailed, Lab, expect, perf_ratio
from gradelib.symbols import forbid_symbols, undefined_symbols

lab = Lab("lab05", title="集合通信原语 (一): ring", program="lab05")

COLLECTIVES = ["reducescatter", "allgather", "allreduce", "broadcast"]
CPU_RANKS = [1, 2, 3, 4, 5, 6, 7, 8]
SIM_RANKS = [1, 2, 3, 4, 5, 6, 7, 8, 16]   # 16: two simulated DGX A100 nodes
MIB = 1 << 20

# Names whose use in the student's object file is a call of a library collective.
FORBIDDEN = ["cl_baseline_allreduce", "dlsym", "dlopen", "dlvsym"] + [
    f"{p}{n}" for p in ("MPI_", "PMPI_") for n in (
        "Allreduce", "Iallreduce", "Reduce", "Ireduce", "Reduce_scatter",
        "Reduce_scatter_block", "Ireduce_scatter", "Allgather", "Allgatherv",
        "Iallgather", "Bcast", "Ibcast", "Alltoall", "Gather", "Scatter")] + [
    f"{p}{n}" for p in ("nccl", "pnccl") for n in (
        "AllReduce", "ReduceScatter", "AllGather", "Broadcast", "Bcast", "Reduce")]


def forbid_library_collectives(ctx):
    """Fails when the student's object refers to a library collective (or to any
    cl_coll_ harness function, or to MPI/NCCL at all)."""
    # runtime=False: the driver itself calls MPI_Allreduce and cl_baseline_allreduce for
    # the baseline; run-time calls from your code are caught by the harness's own guard.
    forbid_symbols(ctx, FORBIDDEN, why="build the collectives from cl_send/cl_recv",
                   runtime=False)
    odd = sorted(s for s in undefined_symbols(ctx)
                 if s.startswith(("MPI_", "PMPI_", "ompi_", "nccl", "pnccl", "cl_coll_")))
    if odd:
        raise CheckFailed("your code calls MPI, NCCL or the harness directly",
                          expected="only the cl_* point-to-point interface",
                          found="calls " + ", ".join(odd))


def verify_tests(results, name):
    """Raises CheckFailed for the first test of collective `name` that went wrong in any
    run of `results` ({ranks: verify JSON})."""
    ran = 0
    for ranks, res in sorted(results.items()):
        for t in res["tests"]:
            if t["name"] != name:
                continue
            ran += 1
            where = (f"{name} on {ranks} rank(s), count {t['count']} ({t['dtype']}, "
                     f"{t['op']}, root {t['root']})")
            if t["status"] != "success":
                raise CheckFailed(f"{where}: your function returned an error",
                                  expected="success", found=f"{t['status']} {t['error']}".strip())
            if t["forbidden"]:
                raise CheckFailed(f"{where}: a library collective was called at run time",
                                  expected="only point-to-point calls",
                                  found=f"{t['forbidden']} called inside your function")
            for key, what in (("wrong", "wrong output elements"),
                              ("overrun", "elements written past the end of recvbuf"),
                              ("input_changed", "elements of sendbuf modified")):
                if t[key]:
                    raise CheckFailed(f"{where}: {what}", expected="0", found=str(t[key]))
    if not ran:
        raise CheckFailed(f"no {name} test ran", expected="tests of " + name, found="none")


def verify_on(ctx, run, ranks_list):
    out = {}
    for n in ranks_list:
        run(n, ctx.out(f"verify{n}.json"))
        out[n] = ctx.load_json(f"verify{n}.json")
    return out


# --- cpu ------------------------------------------------------------------------------

@lab.check("cpu.build", "Only point-to-point calls", points=0, backend="cpu", timeout=20)
def cpu_build(ctx):
    forbid_library_collectives(ctx)


@lab.check("cpu.verify", "Collectives verified on 1 to 8 MPI ranks", points=0, backend="cpu",
           timeout=120, parent="cpu.build")
def cpu_verify(ctx, _):
    return verify_on(ctx, lambda n, f: ctx.mpirun(["verify", "--json", f], ranks=n, timeout=60),
                     CPU_RANKS)


def _cpu_collective(name):
    def check(ctx, results):
        verify_tests(results, name)
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
    ctx.mpirun(["bench", "--coll", "allreduce", "--bytes", str(64 * MIB), "--repeats", "7",
                "--json", ctx.out("bench.json")], ranks=2, timeout=90)
    b = ctx.load_json("bench.json")
    if b["status"] != "success" or b["wrong"] or b["forbidden"]:
        raise CheckFailed("the benchmark run was not correct", expected="success, 0 wrong",
                          found=f"{b['status']}, {b['wrong']} wrong, forbidden {b['forbidden']}")
    mine, base = iter(b["busbw_gbs"]), iter(b["baseline_busbw_gbs"])
    # The driver interleaved them already (MPI_Allreduce, yours, MPI_Allreduce, ...).
    perf_ratio(ctx, student=lambda: next(mine), baseline=lambda: next(base),
               repeats=len(b["busbw_gbs"]), low=0.8, high=0.9, unit="GB/s", name="busbw")
    ctx.mpirun(["sweep", "--coll", "allreduce", "--min-bytes", "4096",
                "--max-bytes", str(16 * MIB), "--factor", "8", "--repeats", "3",
                "--json", ctx.out("sweep.json")], ranks=2, timeout=60)
    s = ctx.load_json("sweep.json")
    ctx.plot("lab05-cpu", {
        "your ring AllReduce": list(zip(s["bytes"], s["series"]["allreduce"]["busbw_gbs"])),
        "MPI_Allreduce": list(zip(s["bytes"], s["series"]["baseline_allreduce"]["busbw_gbs"]))},
        xlabel="message size (bytes)", ylabel="busbw (GB/s)", title="lab05 AllReduce, 2 MPI ranks")


# --- sim ------------------------------------------------------------------------------

@lab.check("sim.verify", "Collectives verified on simulated DGX A100 (1-8 and 16 ranks)",
           points=0, backend="sim", timeout=60, parent="cpu.build")
def sim_verify(ctx, _):
    return verify_on(ctx, lambda n, f: ctx.run([ctx.program, "verify", "--backend", "sim",
                                                "--nranks", str(n), "--json", f], timeout=30),
                     SIM_RANKS)


@lab.check("sim.correct", "All four collectives exact on the simulator", points=10,
           backend="sim", parent="sim.verify")
def sim_correct(ctx, results):
    for name in COLLECTIVES:
        verify_tests(results, name)


@lab.check("sim.perf", "Simulated busbw within 5% of the reference (DGX A100, 8 GPUs)",
           points=15, backend="sim", kind="performance", timeout=60, parent="sim.verify")
def sim_perf(ctx, _):
    ctx.run([ctx.program, "sweep", "--backend", "sim", "--nranks", "8", "--timing-only",
             "--min-bytes", "1024", "--max-bytes", str(64 * MIB), "--repeats", "1",
             "--json", ctx.out("sweep.json")], timeout=40)
    s = ctx.load_json("sweep.json")
    expect("status of your collectives", s["status"], "success")
    if s["forbidden"]:
        raise CheckFailed("a library collective was called", expected="none",
                          found=s["forbidden"])
    sizes, series = s["bytes"], s["series"]
    ctx.plot("lab05-sim", {name: list(zip(sizes, series[name]["busbw_gbs"]))
                           for name in COLLECTIVES + ["baseline_allreduce", "baseline_broadcast"]},
             xlabel="message size (bytes)", ylabel="busbw (GB/s)",
             title="lab05 on a simulated DGX A100 (8 GPUs)")
    # Simulated time is deterministic: one sample per size is exact.
    for name in ("allreduce", "broadcast"):
        for i, size in enumerate(sizes):
            if size < MIB or size not in (MIB, 16 * MIB, 64 * MIB):
                continue
            mine = series[name]["busbw_gbs"][i]
            ref = series["baseline_" + name]["busbw_gbs"][i]
            perf_ratio(ctx, student=lambda: mine, baseline=lambda: ref, repeats=1,
                       low=0.90, high=0.95, unit="GB/s",
                       name=f"{name} busbw at {int(size) >> 20} MiB")


# --- gpu ------------------------------------------------------------------------------

@lab.check("gpu.verify", "Collectives verified on 2 GPUs with NCCL send/recv", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=120, parent="cpu.build")
def gpu_verify(ctx, _):
    ctx.mpirun(["verify", "--backend", "gpu", "--json", ctx.out("gpu.json")], ranks=2,
               timeout=100)
    res = {2: ctx.load_json("gpu.json")}
    for name in COLLECTIVES:
        verify_tests(res, name)


@lab.check("gpu.perf", "AllReduce busbw vs ncclAllReduce (2 GPUs, 64 MiB)", points=10,
           backend="gpu", needs={"gpus": 2}, kind="performance", timeout=120,
           parent="gpu.verify")
def gpu_perf(ctx, _):
    ctx.mpirun(["bench", "--backend", "gpu", "--coll", "allreduce", "--bytes", str(64 * MIB),
                "--repeats", "7", "--json", ctx.out("bench.json")], ranks=2, timeout=100)
    b = ctx.load_json("bench.json")
    expect("benchmark status", b["status"], "success")
    expect("wrong elements", b["wrong"], 0)
    mine, base = iter(b["busbw_gbs"]), iter(b["baseline_busbw_gbs"])
    perf_ratio(ctx, student=lambda: next(mine), baseline=lambda: next(base),
               repeats=len(b["busbw_gbs"]), low=0.6, high=0.8, unit="GB/s", name="busbw")
