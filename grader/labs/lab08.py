"""lab08: 16 GPUs and NVSwitch: ring, tree or NVLS (and which protocol) per message size.

The driver runs the student's tuning model and selector for every AllReduce size from
8 B to 8 GiB on NVSwitch systems (DGX-2 with 16 V100, DGX A100, DGX H100 with NVLink
SHARP) next to the simulator's time of every (NCCL_ALGO, NCCL_PROTO) pair, computed by
the library (common/sim, cl_sim_predict_algo_proto). The best pair per size is the
simulator's minimum; the student's table must stay within 5% of it at every size.
"""

import math

from gradelib import CheckFailed, Lab, expect, perf_ratio

lab = Lab("lab08", title="16 卡与 NVSwitch: ring / tree / NVLS 与协议选择", program="lab08")

SYSTEMS = ["dgx2-v100", "dgx-a100", "dgx-h100"]
ALGOS = ["Ring", "Tree", "NVLS"]
PROTOS = ["LL", "LL128", "Simple"]


def pair(point, algo, proto):
    return next(q for q in point["pairs"] if q["algo"] == algo and q["proto"] == proto)


@lab.check("sim.sweep", "Model and selector run on the NVSwitch systems", points=0,
           backend="sim", timeout=60)
def sim_sweep(ctx):
    out = {}
    for s in SYSTEMS:
        ctx.run([ctx.program, "sweep", "--system", s, "--table", ctx.out(s + ".table"),
                 "--json", ctx.out(s + ".json")])
        out[s] = ctx.load_json(s + ".json")
        with open(ctx.out(s + ".table"), encoding="utf-8") as f:
            out[s]["table_text"] = f.read()
    return out


@lab.check("sim.model", "Predicted time of every algorithm and protocol", points=30,
           backend="sim", parent="sim.sweep")
def sim_model(ctx, sweeps):
    worst = 0.0
    for s in SYSTEMS:
        for p in sweeps[s]["points"]:
            for q in p["pairs"]:
                what = f"{s}, {int(p['bytes'])} B, {q['algo']}/{q['proto']}"
                if not q["sim_ok"]:
                    expect(f"{what}: status (this pair cannot run here)", q["status"],
                           "not supported here")
                    continue
                expect(f"{what}: status", q["status"], "success")
                err = abs(q["us"] / q["sim_us"] - 1) if q["us"] == q["us"] else math.inf
                worst = max(worst, err)
                if err > 0.05:
                    raise CheckFailed(f"{what}: predicted time off the model",
                                      expected=f"{q['sim_us']:.4g} us (within 5%)",
                                      found=f"{q['us']:.4g} us")
    ctx.metric("worst_relative_error", worst)


@lab.check("sim.table", "The NCCL_ALGO/NCCL_PROTO table is valid", points=20, backend="sim",
           parent="sim.sweep")
def sim_table(ctx, sweeps):
    for s in SYSTEMS:
        sw = sweeps[s]
        rows = [line.split() for line in sw["table_text"].splitlines()
                if line.strip() and not line.startswith("#")]
        expect(f"{s}: rows in the table (one per size)", len(rows), len(sw["points"]))
        for p, row in zip(sw["points"], rows):
            size = int(p["bytes"])
            expect(f"{s}, {size} B: choice status", p["choice_status"], "success")
            expect(f"{s}: table row for {size} B", row, [str(size), p["choice_algo"],
                                                          p["choice_proto"]])
            if row[1] not in ALGOS or row[2] not in PROTOS:
                raise CheckFailed(f"{s}, {size} B: not NCCL's spelling",
                                  expected="NCCL_ALGO in Ring/Tree/NVLS, NCCL_PROTO in "
                                           "LL/LL128/Simple", found=" ".join(row[1:]))
            q = pair(p, row[1], row[2])
            if not q["sim_ok"]:
                raise CheckFailed(f"{s}, {size} B: the chosen pair cannot run on {s}",
                                  found=f"{row[1]}/{row[2]}")
            # the selector must pick the minimum of its own model
            mine = [r["us"] for r in p["pairs"] if r["status"] == "success"]
            if q["status"] != "success" or q["us"] > min(mine) * (1 + 1e-9):
                raise CheckFailed(f"{s}, {size} B: the choice is not the fastest by your model",
                                  expected=f"{min(mine):.4g} us", found=f"{q['us']:.4g} us")


@lab.check("sim.perf", "Chosen table within 5% of the best per size", points=30,
           backend="sim", kind="performance", parent="sim.sweep")
def sim_perf(ctx, sweeps):
    for s in SYSTEMS:
        sw = sweeps[s]
        worst, at = math.inf, None
        series = {}
        chosen = []
        for p in sw["points"]:
            size = p["bytes"]
            busfactor = 2 * (sw["gpus"] - 1) / sw["gpus"]
            for algo in ALGOS:
                ok = [r["sim_us"] for r in p["pairs"] if r["algo"] == algo and r["sim_ok"]]
                if ok:
                    series.setdefault(f"{algo} (best protocol)", []).append(
                        (size, size / min(ok) / 1e3 * busfactor))
            best = min(r["sim_us"] for r in p["pairs"] if r["sim_ok"])
            if p["choice_status"] != "success":
                ratio = 0.0
            else:
                q = pair(p, p["choice_algo"], p["choice_proto"])
                ratio = best / q["sim_us"] if q["sim_ok"] else 0.0
                if q["sim_ok"]:
                    chosen.append((size, size / q["sim_us"] / 1e3 * busfactor))
            if ratio < worst:
                worst, at = ratio, int(size)
        series["your table"] = chosen
        ctx.log(f"{s}: worst best/chosen {worst:.3f} at {at} B")
        ctx.plot(f"lab08-{s}", series, xlabel="AllReduce size per GPU (bytes)",
                 ylabel="simulated busbw (GB/s)", logy=True,
                 title=f"lab08 {s}: algorithms and your choice")
        perf_ratio(ctx, student=lambda: max(worst, 1e-9), baseline=lambda: 1.0, repeats=1,
                   low=0.80, high=0.95, unit="x best", name=f"{s} worst size (at {at} B)")


GPU_SIZES = [65536, 1 << 20, 16 << 20, 256 << 20]


@lab.check("gpu.table", "Your choices with NCCL_ALGO/NCCL_PROTO forced vs NCCL's tuner",
           points=10, backend="gpu", kind="performance", needs={"gpus": 2}, timeout=600)
def gpu_table(ctx):
    ngpus = ctx.resources.get("gpus", 0)
    system = "dgx-h100"
    ctx.run([ctx.program, "sweep", "--system", system, "--json", ctx.out("sweep.json")])
    sweep = ctx.load_json("sweep.json")
    for size in GPU_SIZES:
        p = min(sweep["points"], key=lambda x: abs(x["bytes"] - size))
        env = {"NCCL_ALGO": p["choice_algo"], "NCCL_PROTO": p["choice_proto"]}

        def run(forced):
            def measure():
                ctx.mpirun(["bench", "--backend", "gpu", "--bytes", str(size),
                            "--json", ctx.out("bench.json")], ranks=ngpus,
                           env=env if forced else {})
                return ctx.load_json("bench.json")["busbw_median"]
            return measure
        perf_ratio(ctx, student=run(True), baseline=run(False), repeats=3, low=0.8, high=0.95,
                   name=f"busbw at {size} B ({env['NCCL_ALGO']}/{env['NCCL_PROTO']})")
