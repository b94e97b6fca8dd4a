"""lab03: the bandwidth and latency matrix (p2pBandwidthLatencyTest / nvbandwidth style).

The student's code runs in its own program and moves data only through lab03_op (the
lab's operation): the harness fills every operation's buffers with fresh data, checks all
of them, logs when each operation began and, from the rank's trace, when it ended. From
that it rebuilds the timed runs the method prescribes and their median, and reports it
beside the student's matrix; the grader compares the two (exactly on the simulator). With
noise on, the harness holds up some timed runs of every pair, as a busy machine would.
Performance: the student's matrix against the harness's own, interleaved, paired. On the
simulator the student also reads servers' links from their matrices, on recorded servers
the student can see and on hidden ones the course keeps (grader/labs/lab03_hidden).
"""

import glob
import math
import os
import random
import re
import shutil
import statistics

from gradelib import CheckFailed, Lab, expect, expect_close, perf_samples

lab = Lab("lab03", title="带宽与时延测量: P2P 矩阵", program="lab03")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PRACTICE = sorted(glob.glob(os.path.join(ROOT, "labs", "lab03", "systems", "*.conf")))
HIDDEN = sorted(glob.glob(os.path.join(HERE, "lab03_hidden", "*.conf")))

KINDS = ("uni", "bidir", "latency")
METHOD = ["--warmup", "2", "--iters", "4", "--repeats", "5"]
CPU_RANKS = 4


def metric(kind, nbytes, seconds):
    """The handout's figure of merit, written again here."""
    if kind == "uni":
        return nbytes / seconds / 1e9
    if kind == "bidir":
        return 2 * nbytes / seconds / 1e9
    return seconds / 2 * 1e6


def kind_bytes(kind, big):
    return "8" if kind == "latency" else big


def expected(kind, n):
    if kind == "uni":
        return {(i, j) for i in range(n) for j in range(n) if i != j}
    return {(i, j) for i in range(n) for j in range(i + 1, n)}


def rows_by_pair(res):
    return {(r["i"], r["j"]): r for r in res["rows"]}


def finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_ops(res, where):
    """Every expected pair measured once, with the method's operations, all data intact."""
    kind, n = res["kind"], res["ranks"]
    expect(f"{where}: lab03_op calls the harness refused", res["refused_ops"], 0)
    rows, want = rows_by_pair(res), expected(kind, n)
    for (i, j), r in sorted(rows.items()):
        if (i, j) not in want:
            if r["visits"]:
                raise CheckFailed(f"{where} {kind}: pair ({i}, {j}) measured",
                                  expected="each pair i < j once (both directions at once)",
                                  found=f"({i}, {j}) measured {r['visits']} time(s)")
            continue
        if r["visits"] != 1:
            raise CheckFailed(f"{where} {kind}: pair ({i}, {j}) measured {r['visits']} times",
                              expected="every pair measured exactly once", found=str(r["visits"]))
        if r["ops_off"]:
            raise CheckFailed(f"{where} {kind}: pair ({i}, {j}): operations missing or out of "
                              f"order", expected=f"k = 0 .. warmup + iters x repeats - 1 = "
                              f"{res['warmup'] + res['iters'] * res['repeats'] - 1}, in order, "
                              f"on both ranks", found="another sequence")
        expect(f"{where} {kind}: bytes that arrived wrong in pair ({i}, {j})",
               r["wrong_bytes"], 0)


def check_values(res, where, exact):
    """The student's value of every pair against the harness's rebuild of its median run."""
    kind, rows = res["kind"], rows_by_pair(res)
    ratios = []
    for (i, j) in sorted(expected(kind, res["ranks"])):
        r = rows[(i, j)]
        if not finite(r["value"]) or r["value"] <= 0:
            raise CheckFailed(f"{where} {kind}: no value for ({i}, {j})",
                              expected="a positive number written by rank i", found=str(r["value"]))
        if not finite(r["reference"]):
            raise CheckFailed(f"{where} {kind}: ({i}, {j}) has no runs to rebuild",
                              expected="warm-up then repeats x iters operations", found="none")
        if exact:
            expect_close(f"{where} {kind} ({i}, {j}): your value vs the metric of the median "
                         f"timed run ({r['slow_runs']} run(s) held up)",
                         r["value"], r["reference"], rel=1e-6)
        ratios.append(r["value"] / r["reference"])
    mid = statistics.median(ratios)
    if not 0.8 <= mid <= 1.25:
        raise CheckFailed(f"{where} {kind}: your values disagree with the harness's rebuild of "
                          f"the median runs", expected="value / rebuilt median in [0.8, 1.25] "
                          "(median over pairs)", found=f"{mid:.2f}")
    return mid


def check_matrix(res, where):
    """Each entry written by one rank, symmetric where it must be, one pair at a time."""
    kind, rows = res["kind"], rows_by_pair(res)
    for (i, j) in sorted(expected(kind, res["ranks"])):
        r = rows[(i, j)]
        expect(f"{where} {kind}: ranks that wrote [{i}][{j}]", r["writers"], 1)
        if r["overlaps"]:
            raise CheckFailed(f"{where} {kind}: pair ({i}, {j}) measured while another pair was",
                              expected="one pair at a time (all ranks wait between pairs)",
                              found=f"{r['overlaps']} other pair(s) overlapping in time")
        if kind != "uni":
            m = rows[(j, i)]
            expect(f"{where} {kind}: ranks that wrote [{j}][{i}]", m["writers"], 1)
            expect(f"{where} {kind}: [{j}][{i}] equals [{i}][{j}] (one measurement)",
                   m["value"], r["value"])


def matrix_args(kind, big, extra=()):
    return ["--kind", kind, "--bytes", kind_bytes(kind, big), *METHOD, *extra]


# --- cpu ---------------------------------------------------------------------------------

@lab.check("cpu.metric", "Bandwidth and latency from a time", points=10, backend="cpu",
           timeout=30)
def cpu_metric(ctx):
    rng = random.Random()
    cases = [{"kind": kind, "bytes": rng.choice([8, 4096, 1 << 20, 3 * (1 << 22) + 5]),
              "seconds": rng.uniform(1e-6, 1e-2)} for kind in KINDS * 3]
    for case, row in zip(cases, ctx.run_cases("metric", cases)):
        expect(f"status for {case}", row["status"], "success")
        expect_close(f"{case['kind']} of {case['bytes']} B in {case['seconds']:.3g} s",
                     row["value"], metric(case["kind"], case["bytes"], case["seconds"]), rel=1e-9)


@lab.check("cpu.runs", f"Matrices run ({CPU_RANKS} MPI ranks, uni/bidir/latency)", points=0,
           backend="cpu", timeout=150)
def cpu_runs(ctx):
    return {kind: ctx.run_lab("matrix", matrix_args(kind, "1M"), ranks=CPU_RANKS, backend="cpu",
                              timeout=45, name=f"{kind}.json") for kind in KINDS}


@lab.check("cpu.method", "Warm-up, timed runs, median, metric (rebuilt by the harness)",
           points=25, backend="cpu", parent="cpu.runs")
def cpu_method(ctx, runs):
    for kind in KINDS:
        check_ops(runs[kind], "cpu")
        ctx.metric(f"{kind}_value_over_rebuild", round(check_values(runs[kind], "cpu", False), 3))


@lab.check("cpu.matrix", "Complete matrix, one pair at a time, symmetric where it must be",
           points=20, backend="cpu", parent="cpu.runs")
def cpu_matrix(ctx, runs):
    for kind in KINDS:
        check_ops(runs[kind], "cpu")
        check_matrix(runs[kind], "cpu")
    rows = runs["uni"]["rows"]
    ctx.plot("lab03-uni", {f"from rank {i}": [(r["j"], r["value"]) for r in rows if r["i"] == i]
                           for i in range(CPU_RANKS)},
             xlabel="destination rank", ylabel="unidirectional bandwidth (GB/s)", logx=False,
             title=f"lab03: 1 MiB messages between {CPU_RANKS} MPI ranks")


@lab.check("cpu.perf", "Your matrix vs the harness's (4 MiB, 2 ranks, paired rounds)",
           points=20, backend="cpu", kind="performance", timeout=120, parent="cpu.runs")
def cpu_perf(ctx, _):
    data = ctx.run_lab("bench", ["--bytes", "4M", "--warmup", "1", "--iters", "2", "--repeats",
                                 "3", "--rounds", "5", "--noise", "off"],
                       ranks=2, backend="cpu", timeout=100)
    mine, reported, ref = [], [], []
    for r in data["rows"]:
        expect(f"bytes that arrived wrong in ({r['i']}, {r['j']})", r["wrong_bytes"], 0)
        expect(f"operations missing, out of order or repeated in ({r['i']}, {r['j']})",
               r["ops_off"], 0)
        mine += r["rebuilt"]
        reported += r["student"]
        ref += r["reference"]
    # Scored on the harness's own timing of your runs; what you report must agree with it.
    agree = statistics.median(s / m for s, m in zip(reported, mine) if m > 0) if any(mine) else 0
    if not 0.8 <= agree <= 1.25:
        raise CheckFailed("the bandwidths you report disagree with the harness's timing of your runs",
                          expected="reported / rebuilt in [0.8, 1.25] (median)",
                          found=f"{agree:.2f}")
    # The reference measures as the harness does: its paired median measured 0.95-1.01 on
    # a quiet two-core machine; full marks from 0.85 leave room for a busier one.
    perf_samples(ctx, student=mine, baseline=ref, low=0.65, high=0.85, unit="GB/s",
                 name="your bandwidth vs the harness's")


# --- sim ---------------------------------------------------------------------------------

def practice(name):
    return next(p for p in PRACTICE if os.path.basename(p) == name + ".conf")


def system_of(conf):
    """(GPUs, NVLink GB/s, topology path) of a system file."""
    text = open(conf, encoding="utf-8").read()
    value = lambda key: re.search(rf"^{key}\s*=\s*(\S+)", text, re.M).group(1)
    return (int(value("gpus_per_node")), float(value("nvlink_gbps")),
            os.path.normpath(os.path.join(os.path.dirname(conf), value("topology"))))


def true_links(topo):
    """The link of every GPU pair, read from the nvidia-smi topo -m text: NV<k> is k,
    SYS is -1, any other PCIe class 0."""
    rows = []
    for line in open(topo, encoding="utf-8"):
        cells = line.split()
        if re.match(r"GPU\d+\s", line):  # a row; the header line is indented
            rows.append(cells[1:])
    n = len(rows)
    out = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            code = rows[i][j]
            nv = re.fullmatch(r"NV(\d+)", code)
            out[i][j] = int(nv.group(1)) if nv else -1 if code == "SYS" else 0
    return out


def name_link(k):
    return f"NV{k}" if k > 0 else "SYS" if k == -1 else "PCI" if k == 0 else str(k)


def run_infer(ctx, conf, label):
    n, gbps, topo = system_of(conf)
    data = ctx.run_lab("infer", ["--system", conf, "--link-gbps", repr(gbps), "--bytes", "4M",
                                 *METHOD], ranks=n, backend="sim", timeout=60,
                       name=f"infer-{label}.json")
    expect(f"{label}: bytes that arrived wrong", data["wrong_bytes"], 0)
    expect(f"{label}: operations missing or out of order", data["ops_off"], 0)
    expect(f"{label}: lab03_infer status", data["infer_status"], "success")
    truth = true_links(topo)
    got = [r["link"] for r in data["rows"]]
    bad = [f"GPU{i}-GPU{j}: {name_link(got[i][j])} (true {name_link(truth[i][j])})"
           for i in range(n) for j in range(n) if i != j and got[i][j] != truth[i][j]]
    if bad:
        raise CheckFailed(f"{label}: links read wrong for {len(bad)} of {n * (n - 1)} GPU pairs",
                          expected="every pair's NVLink count, PCI or SYS",
                          found="; ".join(bad[:6]) + (" ..." if len(bad) > 6 else ""))
    return data


@lab.check("sim.runs", "Matrices on a simulated 8-GPU PCIe server (pcie-rtx4090)", points=0,
           backend="sim", timeout=90)
def sim_runs(ctx):
    conf = practice("pcie-rtx4090")
    return {kind: ctx.run_lab("matrix", matrix_args(kind, "4M", ["--system", conf]), ranks=8,
                              backend="sim", timeout=40, name=f"sim-{kind}.json")
            for kind in KINDS}


@lab.check("sim.method", "Simulated: every value is the metric of the median run, exactly",
           points=10, backend="sim", parent="sim.runs")
def sim_method(ctx, runs):
    for kind in KINDS:
        check_ops(runs[kind], "sim")
        check_values(runs[kind], "sim", True)
        check_matrix(runs[kind], "sim")


@lab.check("sim.infer", "Links read from the matrices of the practice servers", points=10,
           backend="sim", timeout=120)
def sim_infer(ctx):
    for conf in PRACTICE:
        label = os.path.basename(conf)[:-5]
        data = run_infer(ctx, conf, label)
        if label == "pcie-rtx4090":
            ctx.plot("lab03-sim", {f"from GPU{r['gpu']}": list(enumerate(r["uni_gbps"]))
                                   for r in data["rows"]},
                     xlabel="destination GPU", ylabel="unidirectional bandwidth (GB/s)",
                     logx=False, title="lab03: simulated 8x RTX 4090 PCIe server")


@lab.check("sim.hidden", "Links read from the matrices of servers you have not seen",
           points=15, backend="sim", timeout=150)
def sim_hidden(ctx):
    if not HIDDEN:
        ctx.skip("the hidden servers are kept by the course's grader")
    for conf in HIDDEN:
        # The grader's folder is out of the programs' reach: they get a copy.
        n, gbps, topo = system_of(conf)
        shutil.copy(conf, ctx.out(os.path.basename(conf)))
        shutil.copy(topo, ctx.out(os.path.basename(topo)))
        run_infer(ctx, ctx.out(os.path.basename(conf)), f"server {HIDDEN.index(conf) + 1}")


# --- gpu ---------------------------------------------------------------------------------

@lab.check("gpu.matrix", "GPU matrices over NCCL (every GPU of the node)", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=240)
def gpu_matrix(ctx):
    n = ctx.resources.get("gpus", 2)
    n = max(2, min(8, n if isinstance(n, int) else 2))
    for kind in KINDS:
        res = ctx.run_lab("matrix", matrix_args(kind, "8M"), ranks=n, backend="gpu", timeout=70,
                          name=f"gpu-{kind}.json")
        check_ops(res, "gpu")
        check_values(res, "gpu", False)
        check_matrix(res, "gpu")
        ctx.metric(f"{kind}_matrix", [[r["value"] for r in res["rows"] if r["i"] == i]
                                      for i in range(n)])
