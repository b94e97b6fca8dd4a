"""lab03: the bandwidth and latency matrix (p2pBandwidthLatencyTest / nvbandwidth style).

The driver records, on every process, each pair's transfers and clock readings
(lab03_now). From those records the grader rebuilds the methodology itself:
warm-up before the first reading, the number of timed runs and their length,
the median run and the metric, and compares them with the student's matrix. It
checks that the matrix is complete (each pair measured once, one pair at a
time), symmetric where it must be, and that every transfer's data arrived
intact. Performance: the student's measurement against the harness's reference
measurement, interleaved in one run.
"""

import math
import os
import random
import statistics

from gradelib import CheckFailed, Lab, expect, expect_close, perf_ratio
from gradelib.symbols import forbid_symbols

lab = Lab("lab03", title="带宽与时延测量: P2P 矩阵", program="lab03")

KINDS = ("uni", "bidir", "latency")
METHOD = {"warmup": 2, "iters": 4, "repeats": 5}


def metric(kind, nbytes, seconds):
    """The handout's figure of merit, written again here."""
    if kind == "uni":
        return nbytes / seconds / 1e9
    if kind == "bidir":
        return 2 * nbytes / seconds / 1e9
    return seconds / 2 * 1e6


def shm_leftovers(tag):
    import glob
    return sorted(glob.glob(f"/dev/shm/commlab-u{os.getuid()}-{tag}-*"))


def run_clean(ctx, args, ranks, timeout=40, deadline=30):
    """mpirun with its own shared-memory tag; fails on anything left in /dev/shm."""
    tag = f"g{os.getpid()}x{random.randrange(1 << 30):x}"
    try:
        return ctx.mpirun(args + ["--deadline", str(deadline)], ranks=ranks, timeout=timeout,
                          env={"COMMLAB_SHM_TAG": tag})
    finally:
        left = shm_leftovers(tag)
        for path in left:
            os.unlink(path)
        if left:
            raise CheckFailed("shared-memory segments were left in /dev/shm",
                              expected="nothing left after the run", found=", ".join(left))


def expected_pairs(kind, n):
    if kind == "uni":
        return {(i, j) for i in range(n) for j in range(n) if i != j}
    return {(i, j) for i in range(n) for j in range(i + 1, n)}


def timing_records(res, gpu=False):
    """{(i, j): [records]} of the process that times each pair (rank i; all on gpu)."""
    out = {}
    for r in res["records"]:
        if gpu or r["rank"] == r["i"]:
            out.setdefault((r["i"], r["j"]), []).append(r)
    return out


def check_complete(res, gpu=False):
    """Each pair once, one pair between two syncs, every entry written once, symmetric."""
    kind, n, m = res["kind"], res["n"], res["matrix"]
    expect(f"{kind}: transfers whose data arrived wrong", res["bad_transfers"], 0)
    mixed = [r for r in res["records"] if r["mixed"]]
    if mixed:
        r = mixed[0]
        raise CheckFailed(f"{kind}: operations of several pairs between two lab03_sync() calls",
                          expected="lab03_sync() before every pair (one pair at a time)",
                          found=f"rank {r['rank']}: {r['ops']} operations, first pair "
                                f"({r['i']}, {r['j']}) mixed with others")
    recs = timing_records(res, gpu)
    want = expected_pairs(kind, n)
    missing = sorted(want - set(recs))
    extra = sorted(set(recs) - want)
    twice = sorted(p for p, rs in recs.items() if len(rs) > 1)
    if missing or extra or twice:
        raise CheckFailed(f"{kind}: the pairs measured are not the complete set, each once",
                          expected=("every ordered pair i != j" if kind == "uni" else
                                    "every pair i < j once (both directions at once)"),
                          found=f"missing {missing[:6]}, unexpected {extra[:6]}, "
                                f"measured twice {twice[:6]}")
    for i in range(n):
        for j in range(n):
            v, w = m[i][j], res["writers"][i * n + j]
            if i == j:
                expect(f"{kind}: diagonal [{i}][{i}]", v, 0)
                continue
            if v is None or not math.isfinite(v) or v <= 0:
                raise CheckFailed(f"{kind}: entry [{i}][{j}] not measured",
                                  expected="a positive number", found=str(v))
            if not gpu:
                expect(f"{kind}: processes that wrote [{i}][{j}]", w, 1)
            if kind != "uni":
                expect(f"{kind}: [{i}][{j}] equals [{j}][{i}] (one measurement)", v, m[j][i])


def check_method(res, gpu=False):
    """Warm-up, repeats x iters, and the median run's metric, from the records."""
    kind, m = res["kind"], res["matrix"]
    w, it, rep = res["warmup"], res["iters"], res["repeats"]
    for (i, j), rs in sorted(timing_records(res, gpu).items()):
        where = f"{kind} ({i}, {j})"
        if len(rs) != 1 or rs[0]["mixed"]:
            raise CheckFailed(f"{where}: no single record of this pair",
                              expected="the pair measured once, alone between two lab03_sync()",
                              found=f"{len(rs)} records"
                                    + (", mixed with other pairs" if rs[0]["mixed"] else ""))
        r = rs[0]
        t, ops = r["t"], r["t_ops"]
        if r["t_overflow"] or len(t) != 2 * rep:
            raise CheckFailed(f"{where}: clock readings do not frame {rep} timed runs",
                              expected=f"{2 * rep} lab03_now() readings (start and end of "
                                       f"each run)",
                              found=f"{len(t)}" + ("+" if r["t_overflow"] else ""))
        if ops[0] < w:
            raise CheckFailed(f"{where}: no warm-up before the first timed run",
                              expected=f">= {w} untimed operations first",
                              found=f"{ops[0]} operations before the first lab03_now()")
        runs = [ops[2 * k + 1] - ops[2 * k] for k in range(rep)]
        if any(n != it for n in runs):
            raise CheckFailed(f"{where}: timed runs of the wrong length",
                              expected=f"{it} operations between each start and end reading",
                              found=str(runs))
        per_op = [(t[2 * k + 1] - t[2 * k]) / it for k in range(rep)]
        want = metric(kind, res["bytes"], statistics.median(per_op))
        expect_close(f"{where}: your value vs the metric of the median run "
                     f"(runs: {', '.join(f'{x * 1e6:.2f}' for x in per_op)} us/op)",
                     m[i][j], want, rel=1e-6)


@lab.check("cpu.build", "Only lab03_now() reads the clock", points=0, backend="cpu", timeout=20)
def cpu_build(ctx):
    forbid_symbols(ctx, ["cl_wtime", "cl_comm_time", "MPI_Wtime", "clock_gettime",
                         "gettimeofday", "time", "clock"],
                   why="time only with lab03_now(), so the grader can check the method")


@lab.check("cpu.metric", "Bandwidth and latency from a time", points=10, backend="cpu",
           timeout=30, parent="cpu.build")
def cpu_metric(ctx, _):
    rng = random.Random()
    for k, kind in enumerate(KINDS * 2):
        nbytes = rng.choice([8, 4096, 1 << 20, 3 * (1 << 22) + 5])
        seconds = rng.uniform(1e-6, 1e-2)
        name = f"metric{k}.json"
        ctx.run([ctx.program, "metric", "--kind", kind, "--bytes", nbytes,
                 "--seconds", repr(seconds), "--json", ctx.out(name)])
        expect_close(f"{kind} of {nbytes} B in {seconds:.3g} s", ctx.load_json(name)["value"],
                     metric(kind, nbytes, seconds), rel=1e-9)


@lab.check("cpu.runs", "Matrices run (4 ranks, uni/bidir/latency)", points=0, backend="cpu",
           timeout=120, parent="cpu.build")
def cpu_runs(ctx, _):
    out = {}
    for kind in KINDS:
        nbytes = 8 if kind == "latency" else 1 << 20
        args = ["matrix", "--kind", kind, "--bytes", nbytes, "--json", ctx.out(kind + ".json")]
        for key, v in METHOD.items():
            args += [f"--{key}", v]
        run_clean(ctx, args, ranks=4)
        out[kind] = ctx.load_json(kind + ".json")
    return out


@lab.check("cpu.method", "Warm-up, timed repeats, median of the runs", points=30,
           backend="cpu", parent="cpu.runs")
def cpu_method(ctx, runs):
    for kind in KINDS:
        check_method(runs[kind])


@lab.check("cpu.matrix", "Complete matrix, one pair at a time, symmetric where it must be",
           points=30, backend="cpu", parent="cpu.runs")
def cpu_matrix(ctx, runs):
    for kind in KINDS:
        check_complete(runs[kind])
    m = runs["uni"]["matrix"]
    ctx.plot("lab03-uni", {f"from rank {i}": [(j, m[i][j]) for j in range(len(m)) if j != i]
                           for i in range(len(m))},
             xlabel="destination rank", ylabel="unidirectional bandwidth (GB/s)", logx=False,
             title="lab03: 1 MiB copies through shared memory (4 ranks)")


@lab.check("cpu.perf", "Your measurement vs the harness's reference (8 MiB, 2 ranks)",
           points=30, backend="cpu", kind="performance", timeout=90, parent="cpu.build")
def cpu_perf(ctx, _):
    run_clean(ctx, ["bench", "--bytes", 8 << 20, "--repeats", 9, "--json", ctx.out("bench.json")],
              ranks=2, timeout=60, deadline=50)
    got = ctx.load_json("bench.json")
    expect("transfers whose data arrived wrong", got["bad_transfers"], 0)
    # The median of per-pair ratios: each student sample ran right after a reference one,
    # so a pair shares the machine's state even when the load changes during the run.
    ratios = iter([s / r for s, r in zip(got["student_gbps"], got["reference_gbps"])])
    ctx.metric("student_gbps", got["student_gbps"])
    ctx.metric("reference_gbps", got["reference_gbps"])
    perf_ratio(ctx, student=lambda: next(ratios), baseline=lambda: 1.0,
               repeats=len(got["student_gbps"]), low=0.7, high=0.9, unit="x",
               name="your bandwidth / reference bandwidth")


@lab.check("gpu.matrix", "GPU peer-copy matrices (cudaMemcpyPeerAsync)", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=120, parent="cpu.build")
def gpu_matrix(ctx, _):
    for kind in KINDS:
        nbytes = 8 if kind == "latency" else 64 << 20
        args = ["matrix", "--backend", "gpu", "--kind", kind, "--bytes", nbytes,
                "--json", ctx.out(kind + ".json")]
        for key, v in METHOD.items():
            args += [f"--{key}", v]
        ctx.run([ctx.program] + [str(a) for a in args], timeout=100)
        res = ctx.load_json(kind + ".json")
        check_complete(res, gpu=True)
        check_method(res, gpu=True)
        ctx.metric(f"{kind}_matrix", res["matrix"])
