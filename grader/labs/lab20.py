"""lab20: AlltoAll for MoE expert parallelism: pairwise exchange, the two-level AlltoAll, AlltoAllv,
and the plan of an MoE layer's dispatch (capacity factor, layout, algorithm).

The harness calls the student's collectives in the student's own program, with fresh inputs for
every call, checks every rank's output and reads every rank's trace: the pairwise schedule (one
partner at a time) and the two-level pattern (aggregated inside the node, one message per node
pair on the rank's own rail) are checked, not only the data. Performance is a ratio measured in
the same run: MPI_Alltoall on cpu and across namespaces with shaped links (net), NCCL's grouped
send/recv on gpu, and on sim the same grouped exchange simulated on a fat tree. The MoE plan is
scored by its consequence: the simulated time of its dispatch, made with the student's own
collectives, against the fastest of every layout and algorithm at the least capacity the drop
budget allows, on three machines.
"""

import statistics

from gradelib import CheckFailed, Lab, answers, perf_samples, ramp
from gradelib.collectives import bench_row, check_row, score_busbw, verify_collective

lab = Lab("lab20", title="AlltoAll 与 MoE 专家并行", program="lab20")

CPU_RANKS = [1, 2, 3, 4, 5, 8]
CPU_HIER = [(2, 1), (4, 2), (6, 3), (6, 2), (8, 4)]          # (ranks, ranks per node)
SIM_RANKS = [1, 3, 8, 16]
SIM_HIER = [(16, 0), (64, 0), (12, 4), (8, 8)]                 # 0: the system's 8 GPUs per node
FATTREE = "labs/lab20/systems/dgx-a100-fattree.conf"
FATTREE_4 = "labs/lab20/systems/dgx-a100-fattree-4to1.conf"
MOE_SYSTEMS = [("DGX A100, fat tree 1:1", FATTREE), ("DGX A100, fat tree 4:1", FATTREE_4),
               ("PCIe 8-GPU servers, leaf-spine", "pcie-8gpu")]
MOE_LAYERS = {"--tokens": ["16", "256", "4096"], "--skew": ["0", "0.3", "0.6"],
              "--budget": ["0", "0.01"]}
MOE_LOW, MOE_HIGH = 0.5, 0.8            # a layer's fraction: ramp of best time / your time
MIB = 1 << 20


def median(xs):
    return statistics.median(xs) if xs else 0


def hier_rows(results, what):
    """Raises CheckFailed for the first bad row of the hier mode's runs {(ranks, local): data}."""
    ran = 0
    for (ranks, local), data in sorted(results.items()):
        for row in data["rows"]:
            ran += 1
            row = dict(row, redop="none", root=-1)
            try:
                check_row(row, ranks)
            except CheckFailed as e:
                nodes = f"{local} ranks per node" if local else "the system's ranks per node"
                e.message = f"{what}, {nodes}: {e.message}"
                raise
    if not ran:
        raise CheckFailed("no two-level AlltoAll ran", expected="tests", found="none")


# --- cpu -------------------------------------------------------------------------------------

@lab.check("cpu.verify", "AlltoAll and AlltoAllv verified on 1 to 8 MPI ranks", points=0,
           backend="cpu", timeout=150)
def cpu_verify(ctx):
    return {n: ctx.run_lab("verify", ranks=n, backend="cpu", timeout=60) for n in CPU_RANKS}


@lab.check("cpu.pairwise", "Pairwise-exchange AlltoAll: exact, one partner per step", points=10,
           backend="cpu", parent="cpu.verify")
def cpu_pairwise(ctx, results):
    verify_collective(results, "alltoall")


@lab.check("cpu.alltoallv", "AlltoAllv: exact with empty and uneven blocks", points=10,
           backend="cpu", parent="cpu.verify")
def cpu_alltoallv(ctx, results):
    verify_collective(results, "alltoallv")


@lab.check("cpu.hier", "Two-level AlltoAll: exact, aggregated, one message per node pair",
           points=10, backend="cpu", timeout=120)
def cpu_hier(ctx):
    results = {(n, loc): ctx.run_lab("hier", ["--local", loc], ranks=n, backend="cpu", timeout=40)
               for n, loc in CPU_HIER}
    hier_rows(results, "on MPI ranks")


@lab.check("cpu.perf", "Pairwise AlltoAll busbw vs MPI_Alltoall (4 ranks, 64 MiB)", points=10,
           backend="cpu", kind="performance", timeout=120, parent="cpu.verify")
def cpu_perf(ctx, _):
    data = ctx.run_lab("bench", ["--coll", "alltoall", "--bytes", "64M", "--repeats", "7"],
                       ranks=4, backend="cpu", timeout=100)
    score_busbw(ctx, bench_row(data), low=0.45, high=0.65)


# --- sim --------------------------------------------------------------------------------------

@lab.check("sim.verify", "All three AlltoAlls verified on simulated DGX A100 nodes", points=0,
           backend="sim", timeout=90)
def sim_verify(ctx):
    suite = {n: ctx.run_lab("verify", ranks=n, backend="sim", timeout=40) for n in SIM_RANKS}
    hier = {(n, loc): ctx.run_lab("hier", ["--local", loc], ranks=n, backend="sim", timeout=40,
                                  name=f"hier-sim-{n}-{loc}.json")
            for n, loc in SIM_HIER}
    return suite, hier


@lab.check("sim.correct", "Pairwise, AlltoAllv and two-level exact on the simulator", points=5,
           backend="sim", parent="sim.verify")
def sim_correct(ctx, results):
    suite, hier = results
    for name in ("alltoall", "alltoallv"):
        verify_collective(suite, name)
    hier_rows(hier, "on simulated ranks")


def sim_compare(ctx, system, name):
    """The compare mode's rows for 64 simulated ranks on system (4 KiB to 64 MiB per rank);
    CheckFailed for the first timed AlltoAll that went wrong."""
    data = ctx.run_lab("compare", ["--system", system, "-b", "4K", "-e", "64M", "-f", "4",
                                   "--repeats", "1"], ranks=64, backend="sim", timeout=60,
                       name=name)
    rows = data["rows"]
    for r in rows:
        bad = [k for k in ("#wrong", "overrun", "input_changed") if r.get(k)]
        if bad or r.get("pairwise_status") != "success" or r.get("hier_status") != "success" \
                or r.get("pattern", "ok") != "ok" or r.get("forbidden", "-") != "-":
            raise CheckFailed(f"size {r['size']}: a timed AlltoAll went wrong",
                              expected="exact, in pattern", found=r.get("error") or r.get(
                                  "pattern") or ", ".join(f"{k} {r[k]}" for k in bad))
    return rows


@lab.check("sim.hier", "Two-level AlltoAll vs NCCL's grouped send/recv, 8 DGX A100 on a fat tree",
           points=10, backend="sim", kind="performance", timeout=90, parent="sim.verify")
def sim_hier(ctx, _):
    rows = sim_compare(ctx, FATTREE, "compare-sim.json")
    ctx.plot("lab20-sim-compare", {
        "your two-level": [(r["size"], median(r["hier_time"])) for r in rows],
        "your pairwise": [(r["size"], median(r["pairwise_time"])) for r in rows],
        "grouped send/recv (NCCL)": [(r["size"], median(r["lib_time"])) for r in rows]},
        xlabel="bytes per rank", ylabel="time (us)", logy=True,
        title="AlltoAll on 8 simulated DGX A100 (64 GPUs), fat tree 1:1")
    # Simulated time is deterministic: one sample per size is exact.
    for r in rows:
        if r["size"] in (16 * MIB, 64 * MIB):
            perf_samples(ctx, student=r["hier_time"], baseline=r["lib_time"],
                         higher_is_better=False, low=0.9, high=1.1, unit="us",
                         name=f"two-level time at {r['size'] >> 20} MiB per rank")


@lab.check("sim.moe", "MoE dispatch plans: capacity factor and layout vs the best, 3 machines",
           points=25, backend="sim", kind="decision", timeout=150, parent="sim.correct")
def sim_moe(ctx, _):
    series = {}
    layers = [x for k, v in MOE_LAYERS.items() for x in (k, ",".join(ctx.sanitizer_subset(v)))]
    for label, system in ctx.sanitizer_subset(MOE_SYSTEMS, 1):
        data = ctx.run_lab("moe", ["--system", system, *layers], ranks=64, backend="sim",
                           timeout=70, name=f"moe-{system.split('/')[-1]}.json")
        points = []
        for i, r in enumerate(data["rows"], 1):
            what = (f"{label}: {r['tokens']} tokens per rank, skew {r['skew']}, "
                    f"budget {r['budget']}")
            bad = [k for k in ("#wrong", "overrun", "input_changed") if r.get(k)]
            if bad or r.get("forbidden", "-") != "-":
                raise CheckFailed(f"{what}: a dispatch went wrong", expected="exact data",
                                  found=", ".join(f"{k} {r[k]}" for k in bad) or r["forbidden"])
            if r.get("status") != "success":
                fraction, line = 0.0, f"{what}: {r.get('error', r.get('status'))}"
            else:
                fraction = round(ramp(r["ratio"], MOE_LOW, MOE_HIGH), 4)
                line = (f"{what}: your {r['plan']} (capacity {r['capacity']}) {r['time']:.0f} us, "
                        f"best {r['best']} (capacity {r['least_capacity']}) "
                        f"{r['best_time']:.0f} us: ratio {r['ratio']:.2f}")
                points.append((i, r["ratio"]))
            ctx.perf_fractions.append(fraction)
            ctx.perf_messages.append(line)
            ctx.log(line)
        series[label] = points
    ctx.plot("lab20-sim-moe", series, logx=False,
             xlabel="layer (tokens 16, 256, 4096 x skew 0, 0.3, 0.6 x budget 0, 1%)",
             ylabel="best time / your time", title="lab20: your MoE dispatch plans, layer by layer")
    fr = ctx.perf_fractions
    ctx.metric("layers", len(fr))
    ctx.metric("full_layers", sum(1 for f in fr if f >= 1))
    ctx.perf_messages.insert(0, f"{sum(1 for f in fr if f >= 1)}/{len(fr)} layers at full marks "
                                f"(best / yours >= {MOE_HIGH}; none at <= {MOE_LOW})")


# --- the handout's questions ----------------------------------------------------------------

def first_win(rows):
    """The sizes that answer "from which swept size on does the two-level AlltoAll beat the
    grouped send/recv": the first size where it is faster (0: none), and any size where the two
    are within 2% of each other while every smaller size is not clearly faster (ties)."""
    ok = set()
    for r in rows:
        hier, lib = median(r["hier_time"]), median(r["lib_time"])
        if hier <= 1.02 * lib:
            ok.add(r["size"])
        if hier < 0.98 * lib:
            return ok
    return ok | {0}


@lab.check("sim.answers", "思考: from which size the two-level AlltoAll wins, fat tree 1:1 and 4:1",
           points=10, backend="sim", kind="question", parent="sim.correct", timeout=90)
def sim_answers(ctx, _):
    given = answers.read_answers(ctx)
    checks = []
    for key, system, name in (("hier_wins_from_1to1", FATTREE, "compare-1to1.json"),
                              ("hier_wins_from_4to1", FATTREE_4, "compare-4to1.json")):
        want = first_win(sim_compare(ctx, system, name))
        shown = " or ".join(str(v) for v in sorted(want))
        checks.append(answers.check_answer(given, key, lambda v, w=want: v in w,
                                           f"{shown} (bytes per rank)", number=True))
    answers.score_answers(ctx, checks)


# --- net -------------------------------------------------------------------------------------

def net_data(ctx, args, rate, name, timeout):
    """Runs the program across 2 namespace nodes of 2 ranks each and returns its results."""
    out = ctx.out(name)
    ctx.netrun([*args, "--json", out, "--deadline", str(timeout - 10)], nodes=2,
               ranks_per_node=2, rate=rate, timeout=timeout, check=True)
    data = ctx.load_json(name)
    if data.get("status") != "ok":
        raise CheckFailed(f"the program failed: {data.get('error', '')}", expected="ok",
                          found=data.get("status"))
    return data


@lab.check("net.verify", "All three AlltoAlls exact across 2 namespace nodes of 2 ranks",
           points=0, backend="net", timeout=150)
def net_verify(ctx):
    suite = net_data(ctx, ["verify"], "1gbit", "verify-net.json", 70)
    for name in ("alltoall", "alltoallv"):
        verify_collective({4: suite}, name)
    hier = net_data(ctx, ["hier", "--local", "2"], "1gbit", "hier-net.json", 50)
    hier_rows({(4, 2): hier}, "across namespaces")


@lab.check("net.perf", "Pairwise and two-level vs MPI_Alltoall through 200 Mbit/s links (4 MiB)",
           points=10, backend="net", kind="performance", timeout=150, parent="net.verify")
def net_perf(ctx, _):
    data = net_data(ctx, ["compare", "--local", "2", "--bytes", "4M", "-b", "4M", "-e", "4M",
                          "--repeats", "5"], "200mbit", "compare-net.json", 120)
    row = data["rows"][0]
    if row.get("#wrong") or row.get("lib_wrong") or row.get("pattern", "ok") != "ok":
        raise CheckFailed("a timed AlltoAll went wrong", expected="exact, in pattern",
                          found=row.get("pattern") or f"#wrong {row.get('#wrong')}")
    for key, name in (("pairwise_time", "pairwise"), ("hier_time", "two-level")):
        perf_samples(ctx, student=row[key], baseline=row["lib_time"], higher_is_better=False,
                     low=0.6, high=0.8, unit="us", name=f"{name} time")


# --- gpu -------------------------------------------------------------------------------------

@lab.check("gpu.one", "AlltoAll, AlltoAllv and two-level on one GPU (no launcher)", points=0,
           backend="gpu", needs={"gpus": 1}, timeout=120)
def gpu_one(ctx):
    res = {1: ctx.run_lab("verify", backend="gpu", timeout=60)}
    for name in ("alltoall", "alltoallv"):
        verify_collective(res, name)
    hier_rows({(1, 1): ctx.run_lab("hier", ["--local", "1"], backend="gpu", timeout=40)},
              "on one GPU")


@lab.check("gpu.verify", "All three AlltoAlls exact on 2 GPUs with NCCL send/recv", points=5,
           backend="gpu", needs={"gpus": 2}, timeout=150)
def gpu_verify(ctx):
    res = {2: ctx.run_lab("verify", ranks=2, backend="gpu", timeout=80)}
    for name in ("alltoall", "alltoallv"):
        verify_collective(res, name)
    hier_rows({(2, loc): ctx.run_lab("hier", ["--local", loc], ranks=2, backend="gpu", timeout=40,
                                     name=f"hier-gpu-{loc}.json") for loc in (1, 2)},
              "on 2 GPUs")


@lab.check("gpu.perf", "Pairwise AlltoAll busbw vs NCCL grouped send/recv (2 GPUs, 64 MiB)",
           points=5, backend="gpu", needs={"gpus": 2}, kind="performance", timeout=120,
           parent="gpu.verify")
def gpu_perf(ctx, _):
    data = ctx.run_lab("bench", ["--coll", "alltoall", "--bytes", "64M", "--repeats", "7"],
                       ranks=2, backend="gpu", timeout=100)
    score_busbw(ctx, bench_row(data), low=0.6, high=0.8)
