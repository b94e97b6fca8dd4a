"""lab18: a two-level AllReduce on node and rail communicators, its cost model, its choice.

The harness tells each rank its node (cpu: --ranks-per-node with block or cyclic placement;
sim: the recorded system's GPUs of a node; net: the namespace node it runs in), calls the
student's lab18_split once, then verifies every AllReduce call (fresh inputs, exact
results) and the trace of every call: across nodes a rank may talk only to its own rail, and
only as much as an AllReduce of its block needs. The model and the choice are scored by
their consequence: on sim, the simulator's time of the chosen algorithm against the better
of NCCL's flat ring and the two-level scheme, at random machine sizes and message sizes; on
net, with a slow link between namespace nodes and fast shared memory inside them, the
two-level AllReduce must beat the given flat ring in the same run, as the model predicts,
and with every link equal (the control) the model must predict no such gain.
"""

import random
import statistics

from gradelib import CheckFailed, Lab, expect, perf_samples
from gradelib.collectives import bench_row, check_row, score_busbw, verify_collective

lab = Lab("lab18", title="分层集合通信", program="lab18")

# (ranks, ranks per node, placement): one node, several, cyclic placement, one rank a node.
CPU_LAYOUTS = [(4, 2, "block"), (6, 2, "cyclic"), (8, 4, "cyclic"), (4, 4, "block"),
               (3, 1, "block")]
SIM_LAYOUTS = [("dgx-a100", 8), ("dgx-a100", 16), ("dgx-a100", 32), ("dgx-h100", 16)]
NET_RATE = "200mbit"            # a slow link that two cores drive (25 MB/s)
NET_BYTES = "4M"
MIB = 1 << 20
# Points of sim.choice: a model that is wrong but right on most points (one that ignores the
# flat ring's bytes is right on about 95%) must not reach 97% by the luck of the draw.
CHOICE_POINTS = 2000


# --- cpu ------------------------------------------------------------------------------

@lab.check("cpu.verify", "Two-level AllReduce verified on 3 to 8 MPI ranks in 1 to 3 nodes",
           points=0, backend="cpu", timeout=150)
def cpu_verify(ctx):
    out = {}
    for ranks, per, placement in CPU_LAYOUTS:
        ctx.log(f"{ranks} ranks, {per} per node, {placement}")
        out[(ranks, per, placement)] = ctx.run_lab(
            "verify", ["--ranks-per-node", per, "--placement", placement], ranks=ranks,
            backend="cpu", timeout=60, name=f"verify-{ranks}-{per}-{placement}.json")
    return out


@lab.check("cpu.hier", "Exact on uneven counts, 4 types, 4 ops; rail-aligned, block-sized "
           "traffic across nodes", points=25, backend="cpu", parent="cpu.verify")
def cpu_hier(ctx, results):
    for (ranks, per, placement), res in results.items():
        rows = [r for r in res["rows"] if r["name"] == "allreduce"]
        if not rows:
            raise CheckFailed("no AllReduce test ran", expected="tests", found="none")
        for row in rows:
            try:
                check_row(row, ranks)
            except CheckFailed as e:
                e.message = f"{per} ranks per node, {placement} placement: {e.message}"
                raise


# --- sim ------------------------------------------------------------------------------

@lab.check("sim.verify", "Verified on simulated DGX A100 (1, 2, 4 nodes) and DGX H100 (2 nodes)",
           points=0, backend="sim", timeout=120)
def sim_verify(ctx):
    return {(system, n): ctx.run_lab("verify", ["--system", system], ranks=n, backend="sim",
                                     timeout=50, name=f"verify-{system}-{n}.json")
            for system, n in SIM_LAYOUTS}


@lab.check("sim.hier", "Exact and two-level on the simulated DGX nodes", points=10,
           backend="sim", parent="sim.verify")
def sim_hier(ctx, results):
    verify_collective({n: r for (_, n), r in results.items()}, "allreduce")


@lab.check("sim.perf", "Two-level vs one ring over all 16 GPUs (2 DGX A100, 64 MiB)",
           points=15, backend="sim", kind="performance", timeout=60, parent="sim.verify")
def sim_perf(ctx, _):
    data = ctx.run_lab("bench", ["--coll", "allreduce", "--bytes", "64M", "--repeats", "1"],
                       ranks=16, backend="sim", timeout=50)
    # One ring over the 16 GPUs crosses each node boundary on one NIC; the two-level
    # scheme puts each GPU's block on its own rail: about 5x here, 2x without rails.
    score_busbw(ctx, bench_row(data), low=2.5, high=4.0, name="busbw vs one ring")


def _grid(rng, n):
    """n random points: a DGX system, 1-64 nodes, 4 KiB to 4 GiB per GPU (log-uniform)."""
    return [{"system": rng.choice(["dgx-a100", "dgx-h100"]), "nodes": rng.randint(1, 64),
             "bytes": int(2 ** rng.uniform(12, 32))} for _ in range(n)]


@lab.check("sim.choice", "Your choice vs the better of NCCL's ring and the two-level scheme "
           "(DGX A100/H100, 1-64 nodes)", points=25, backend="sim", kind="performance",
           timeout=60, parent="sim.verify")
def sim_choice(ctx, _):
    seed = random.SystemRandom().randrange(1 << 30)
    ctx.log(f"points drawn with seed {seed}")
    rows = ctx.run_cases("choose", _grid(random.Random(seed), CHOICE_POINTS), timeout=50)
    bad = []
    for r in rows:
        if r.get("status") != "success":
            raise CheckFailed(f"{r['system']}, {r['nodes']} nodes, {r['bytes']} bytes: "
                              f"{r.get('error', '')}", expected="a choice", found=r["status"])
        # Within 5% of the better time is a tie: either answer is right.
        if r["best_over_chosen"] < 0.95:
            bad.append(r)
    for r in bad[:6]:
        ctx.log(f"{r['system']} x{r['nodes']} {r['bytes']} B: chose {r['choice']}, flat "
                f"{r['sim_flat_us']:.1f} us, hier {r['sim_hier_us']:.1f} us (your model "
                f"{r['model_flat_us']:.1f} / {r['model_hier_us']:.1f})")
    good = 1 - len(bad) / len(rows)
    ctx.metric("costly_choices", len(bad))
    for system in ("dgx-a100", "dgx-h100"):
        pts = sorted((r["bytes"], r["sim_flat_us"] / r["sim_hier_us"]) for r in rows
                     if r["system"] == system and r["nodes"] >= 8)
        if pts:
            ctx.plot(f"lab18-{system}", {"flat time / two-level time (8-64 nodes)": pts},
                     xlabel="bytes per GPU", ylabel="speedup of the two-level scheme",
                     title=f"lab18: where the hierarchy wins on {system}")
    perf_samples(ctx, student=[good], baseline=[1.0], low=0.8, high=0.97, unit="",
                 name="share of points where your choice is within 5% of the better")


# --- net --------------------------------------------------------------------------------

def _compare(ctx, nodes, per_node, model_args, json_name, rank_args=()):
    left = max(10, int(ctx.check.timeout) - 15)
    ctx.netrun(["compare", "--bytes", NET_BYTES, "--repeats", "5", *rank_args, *model_args,
                "--json", ctx.out(json_name), "--deadline", str(left)],
               nodes=nodes, ranks_per_node=per_node, rate=NET_RATE, rails=1,
               timeout=left + 10)
    data = ctx.load_json(json_name)
    if data.get("status") != "ok":
        raise CheckFailed(f"the program failed: {data.get('error', '')}", expected="ok",
                          found=data.get("status"))
    row = data["rows"][0]
    if row["wrong_flat"]:
        raise CheckFailed("the given flat ring gave wrong data (a harness problem)",
                          expected="0", found=str(row["wrong_flat"]))
    if row["wrong_hier"]:
        raise CheckFailed("your two-level AllReduce gave wrong data", expected="0 wrong "
                          "elements", found=str(row["wrong_hier"]))
    if row["pattern"] != "ok":
        raise CheckFailed("your AllReduce is not two-level", expected="rail-aligned, "
                          "block-sized traffic across nodes", found=row["pattern"])
    pairs = [f / h for f, h in zip(row["flat_s"], row["hier_s"])]
    ctx.metric("measured_speedup", round(statistics.median(pairs), 3))
    ctx.metric("model_speedup", round(row["model_flat_s"] / row["model_hier_s"], 3))
    return row


# The model's machines: shared memory inside a node (5 GB/s, 2 us a step) and a 200 Mbit/s
# NIC (25 MB/s, 80 us a step: TCP between namespaces); the control's "nodes" are pairs of
# namespace nodes, each rank with its own NIC, so inside a pair the link is that NIC.
SLOW = ["--intra", "5:2", "--inter", "0.025:80", "--nics", "1"]
EQUAL = ["--intra", "0.025:80", "--inter", "0.025:80", "--nics", "2"]


@lab.check("net.control", "Equal links (every rank its own 200 Mbit/s node): the model "
           "predicts no gain", points=10, backend="net", timeout=120)
def net_control(ctx):
    row = _compare(ctx, 4, 1, EQUAL, "control.json", rank_args=("--ranks-per-node", "2"))
    predicted = row["model_flat_s"] / row["model_hier_s"]
    if not 0.8 <= predicted <= 1.2:
        raise CheckFailed("with every link equal your model predicts a large difference",
                          expected="flat / two-level within 0.8..1.2 (both move 2(p-1)/p of "
                                   "the data over each rank's link)",
                          found=f"{predicted:.2f} (measured {ctx.metrics['measured_speedup']})")


@lab.check("net.hier", "Slow link between nodes: two-level vs the flat ring (2 nodes x 2 "
           "ranks, 200 Mbit/s)", points=15, backend="net", kind="performance", timeout=120)
def net_hier(ctx):
    row = _compare(ctx, 2, 2, SLOW, "slow.json")
    predicted = row["model_flat_s"] / row["model_hier_s"]
    if row["choice"] != "hier" or predicted < 1.1:
        raise CheckFailed("your model does not predict that the hierarchy wins here",
                          expected="choice hier, predicted flat / two-level >= 1.1",
                          found=f"choice {row['choice']}, predicted {predicted:.2f}")
    # Bandwidth alone: the flat ring moves 1.5 S over the node link, the hierarchy S.
    perf_samples(ctx, student=row["flat_s"], baseline=row["hier_s"], low=1.05, high=1.3,
                 unit="s", name="flat ring time / your time")


# --- gpu --------------------------------------------------------------------------------

@lab.check("gpu.verify", "Verified on 2 GPUs as 2 one-GPU nodes (NCCL send/recv)", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=150)
def gpu_verify(ctx):
    res = {2: ctx.run_lab("verify", ["--ranks-per-node", "1"], ranks=2, backend="gpu",
                          timeout=120)}
    verify_collective(res, "allreduce")


# --- cluster ----------------------------------------------------------------------------

@lab.check("cluster.verify", "Verified on 2 real nodes, ranks placed round-robin (mpirun "
           "--map-by node), nodes found by host name", points=10, backend="cluster",
           needs={"nodes": 2, "ranks": 4}, timeout=300)
def cluster_verify(ctx):
    res = {4: ctx.run_lab("verify", ranks=4, backend="cpu", timeout=200,
                          mpi_args=["--map-by", "node"])}
    expect("nodes found", res[4].get("nodes"), 2)
    verify_collective(res, "allreduce")
    data = ctx.run_lab("compare", ["--bytes", "64M", "--repeats", "3"], ranks=4, backend="cpu",
                       timeout=80, mpi_args=["--map-by", "node"], name="compare.json")
    row = data["rows"][0]
    if row["wrong_hier"] or row["pattern"] != "ok":
        raise CheckFailed("your AllReduce between real nodes", expected="exact and two-level",
                          found=f"{row['wrong_hier']} wrong elements, pattern {row['pattern']}")
    ctx.metric("measured_speedup", round(statistics.median(
        f / h for f, h in zip(row["flat_s"], row["hier_s"])), 3))
