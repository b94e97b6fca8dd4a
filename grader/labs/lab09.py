"""lab09: an intra-node shared-memory transport (SPSC chunked ring in POSIX shm).

The student's ring runs between two threads under ThreadSanitizer (memory
order), between two processes under a random-size stress test (torn, lost or
reordered messages, counters wrapping past 2^64), under an AllReduce on 1 to
4 ranks, and against single-thread memcpy and Open MPI's shared-memory path in
the same run. Every run gets its own shared-memory tag; after it, nothing with
that tag may be left in /dev/shm, pass or fail. Every run has a deadline, so a
deadlocked transport fails instead of hanging the grader.
"""

import glob
import os
import random

from gradelib import CheckFailed, Lab, expect, perf_ratio
from gradelib.symbols import forbid_symbols

lab = Lab("lab09", title="共享内存通信: 无锁 SPSC 环形缓冲区", program="lab09")

FORBIDDEN = ["MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Isend", "MPI_Irecv", "MPI_Allreduce",
             "MPI_Reduce_scatter", "MPI_Allgather", "cl_send", "cl_recv", "cl_sendrecv",
             "cl_baseline_allreduce", "pthread_mutex_lock", "sem_wait"]


def shm_leftovers(tag):
    """Names this run left in /dev/shm (see common/shm.h for the naming)."""
    return sorted(glob.glob(f"/dev/shm/commlab-u{os.getuid()}-{tag}-*"))


def run_clean(ctx, args, ranks, timeout, deadline, check=True, mpi_args=()):
    """mpirun with a fresh shared-memory tag and a deadline; fails on anything left in
    /dev/shm (and removes it), whatever the run's outcome."""
    tag = f"g{os.getpid()}x{random.randrange(1 << 30):x}"
    try:
        return ctx.mpirun(args + ["--deadline", str(deadline)], ranks=ranks, timeout=timeout,
                          env={"COMMLAB_SHM_TAG": tag}, check=check, mpi_args=mpi_args)
    finally:
        left = shm_leftovers(tag)
        for path in left:
            os.unlink(path)
        if left:
            raise CheckFailed("shared-memory segments were left in /dev/shm",
                              expected="nothing left after the run",
                              found=", ".join(os.path.basename(p) for p in left))


@lab.check("cpu.build", "Only the rings: no MPI, no locks", points=0, backend="cpu", timeout=20)
def cpu_build(ctx):
    forbid_symbols(ctx, FORBIDDEN, why="move the data through your rings, lock-free")


@lab.check("cpu.race", "No data race under ThreadSanitizer (acquire/release)", points=20,
           backend="cpu", timeout=120, parent="cpu.build")
def cpu_race(ctx, _):
    race = os.path.join(os.path.dirname(ctx.program), "lab09-race")
    if not os.path.exists(race):
        raise CheckFailed("the race checker was not built", expected=race, found="no file")
    # ThreadSanitizer reserves terabytes of address space for its shadow memory: lift the
    # per-process address-space limit for this one command (its real use is small).
    limits = getattr(ctx, "limits", None)
    saved = getattr(limits, "mem_mb", None)
    try:
        if saved is not None:
            limits.mem_mb = 0
        res = ctx.run([race, "3000"], timeout=45, check=False)
        fatal = "FATAL: ThreadSanitizer" in res.stdout + res.stderr
        if fatal and os.path.exists("/usr/bin/setarch"):
            # Some kernels randomise mappings more than this ThreadSanitizer expects.
            res = ctx.run(["setarch", os.uname().machine, "-R", race, "3000"], timeout=45,
                          check=False)
    finally:
        if saved is not None:
            limits.mem_mb = saved
    if "ThreadSanitizer: CHECK failed" in res.stdout + res.stderr:
        raise CheckFailed("ThreadSanitizer could not start on this machine",
                          expected="the race checker runs", found="sanitizer start-up failure",
                          details=res.stderr_tail(10))
    text = res.stdout + res.stderr
    if "ThreadSanitizer" in text:
        where = [line.strip() for line in text.splitlines() if " lab09_" in line][:4]
        raise CheckFailed("ThreadSanitizer found a data race between producer and consumer",
                          expected="payload published with a release store of head, read only "
                                   "after an acquire load of head; slot freed by a release "
                                   "store of tail after the copy",
                          found="data race in " + "; ".join(where) if where else "data race",
                          details=res.stderr_tail(30))
    ctx.require_ok(res)
    expect("checker output", res.stdout.strip().endswith("0 wrong"), True)


@lab.check("cpu.stress", "Stress: random sizes, wrap-around, no torn or lost message",
           points=30, backend="cpu", timeout=90, parent="cpu.build")
def cpu_stress(ctx, _):
    seed = random.randrange(1, 1 << 30)
    ctx.log(f"seed {seed}")
    for nslots, chunk in ((4, 1000), (1, 64), (2, 4096)):
        out = ctx.out(f"stress-{nslots}-{chunk}.json")
        run_clean(ctx, ["stress", "--seed", seed, "--nslots", nslots, "--chunk", chunk,
                        "--messages", 3000, "--json", out], ranks=2, timeout=30, deadline=20)
        got = ctx.load_json(os.path.basename(out))
        what = f"{nslots} slots of {chunk} B (seed {seed})"
        expect(f"{what}: messages delivered", got["messages"], got["expected_messages"])
        expect(f"{what}: torn messages (wrong bytes)", got["torn"], 0)
        expect(f"{what}: lost, duplicated or reordered messages", got["lost_or_reordered"], 0)
        ctx.metric(f"bytes_{nslots}x{chunk}", got["bytes"])


@lab.check("cpu.allreduce", "AllReduce on the rings, 1 to 4 ranks", points=20, backend="cpu",
           timeout=120, parent="cpu.build")
def cpu_allreduce(ctx, _):
    seed = random.randrange(1, 1 << 20)
    for ranks in (1, 2, 3, 4):
        out = ctx.out(f"allreduce-{ranks}.json")
        run_clean(ctx, ["allreduce", "--seed", seed, "--json", out], ranks=ranks, timeout=40,
                  deadline=30)
        got = ctx.load_json(os.path.basename(out))
        bad = [f"{c['count']} x {c['dtype']} {c['op']}: {c['wrong']} wrong"
               for c in got["cases"] if c["wrong"]]
        if bad:
            raise CheckFailed(f"AllReduce on {ranks} ranks gave wrong elements (seed {seed})",
                              expected="0 wrong elements", found="; ".join(bad))


def paired_ratio(ctx, mine, base, low, high, name):
    """Scores the median of the per-sample ratios mine[r] / base[r]. The driver ran each pair
    back to back, so a pair shares the machine's state; medians of each side alone can land
    in different modes when the load on a shared machine changes during the run."""
    ratios = iter([m / b for m, b in zip(mine, base)])
    ctx.metric(name + " samples (GB/s)", list(mine))
    ctx.metric(name + " baseline samples (GB/s)", list(base))
    return perf_ratio(ctx, student=lambda: next(ratios), baseline=lambda: 1.0,
                      repeats=len(mine), low=low, high=high, unit="x", name=name)


def bench(ctx, nbytes, repeats):
    out = ctx.out(f"bench-{nbytes}.json")
    run_clean(ctx, ["bench", "--bytes", nbytes, "--repeats", repeats, "--json", out], ranks=2,
              timeout=100, deadline=90)
    got = ctx.load_json(os.path.basename(out))
    if got["corrupt_bytes"]:
        raise CheckFailed("data arrived wrong during the benchmark", expected="0 bad bytes",
                          found=str(got["corrupt_bytes"]))
    return got


@lab.check("cpu.perf_memcpy", "Ring bandwidth vs single-thread memcpy (64 MiB)", points=15,
           backend="cpu", kind="performance", timeout=120, parent="cpu.build")
def cpu_perf_memcpy(ctx, _):
    # 64 MiB is twice the last-level cache of common servers: memcpy then measures memory
    # bandwidth, not cache bandwidth, and so does the transport.
    got = bench(ctx, 64 << 20, 9)
    res = paired_ratio(ctx, got["ring_gbps"], got["memcpy_gbps"], low=0.2, high=0.4,
                       name="ring / memcpy")
    ctx.metric("mpi_gbps_median_64MiB", sorted(got["mpi_gbps"])[len(got["mpi_gbps"]) // 2])
    return res


@lab.check("cpu.perf_mpi", "Ring bandwidth vs Open MPI's shared-memory path (4 MiB)",
           points=15, backend="cpu", kind="performance", timeout=120, parent="cpu.build")
def cpu_perf_mpi(ctx, _):
    got = bench(ctx, 4 << 20, 9)
    paired_ratio(ctx, got["ring_gbps"], got["mpi_gbps"], low=0.8, high=1.0,
                 name="ring / MPI send-recv")
    ctx.plot("lab09-bandwidth", {
        "your ring": [(i + 1, v) for i, v in enumerate(got["ring_gbps"])],
        "MPI send/recv (vader)": [(i + 1, v) for i, v in enumerate(got["mpi_gbps"])],
        "memcpy, 1 thread": [(i + 1, v) for i, v in enumerate(got["memcpy_gbps"])]},
        xlabel="sample (interleaved)", ylabel="bandwidth (GB/s)", logx=False,
        title="lab09: 4 MiB transfers, rank 0 -> rank 1")
