"""lab11: communication competing with computation, and overlapping the two.

cpu: two MPI ranks; every AllReduce crosses the emulated link of
labs/lab11/netem.c, whose wire advances only when the process calls into MPI.
The driver times compute alone, the AllReduce alone and the student's
overlapped step, interleaved, and verifies every overlapped step element by
element; the grader scores overlap against max(compute, comm) of the same
repeat. gpu: the same with a CUDA kernel and ncclAllReduce on two streams.
"""

import re

from gradelib import CheckFailed, Lab, expect, perf_ratio
from gradelib.symbols import undefined_symbols

lab = Lab("lab11", title="SM 资源与计算通信重叠", program="lab11")

REPEATS = 21
ALLOWED_MPI = {"lab11_net_iallreduce", "lab11_net_test", "lab11_net_testall", "lab11_net_wait",
               "lab11_net_waitall", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Wtime",
               "MPI_Error_string"}
# Full points when the overlapped step takes at most 1.15 x max(compute, comm); none from 1.6 x.
HIGH, LOW = 1 / 1.15, 1 / 1.6


def chunk_of(elem_s, segment_s, count):
    per = segment_s / 4.0 / elem_s
    return max(1, min(count, int(per)))


@lab.check("cpu.build", "Only the allowed MPI calls", points=0, backend="cpu", timeout=20)
def cpu_build(ctx):
    used = undefined_symbols(ctx)
    bad = sorted(s for s in used if (re.match(r"P?MPI_", s) and s not in ALLOWED_MPI)
                 or s.startswith("lab11_netem"))
    if bad:
        raise CheckFailed("your code calls MPI functions this lab does not allow",
                          expected="only MPI_Iallreduce, MPI_Test(all), MPI_Wait(all), "
                          "MPI_Comm_rank/size, MPI_Wtime", found="calls " + ", ".join(bad))


@lab.check("cpu.chunk", "Progress interval: elements per chunk", points=10, backend="cpu",
           parent="cpu.build")
def cpu_chunk(ctx, _):
    for i, (elem, seg, count) in enumerate([(1e-7, 5.3e-4, 131072), (8.7e-8, 5.34e-4, 131072),
                                            (1e-3, 1e-4, 1000), (1e-9, 1.0, 1000),
                                            (2.5e-7, 4e-3, 4096)]):
        ctx.run([ctx.program, "chunk", repr(elem), repr(seg), str(count),
                 "--json", ctx.out(f"chunk{i}.json")])
        got = ctx.load_json(f"chunk{i}.json")["chunk"]
        want = chunk_of(elem, seg, count)
        if abs(got - want) > 1:
            raise CheckFailed(f"chunk for elem_s={elem:g}, segment_s={seg:g}, count={count}",
                              expected=f"{want} (floor(segment_s / 4 / elem_s), 1..count)",
                              found=str(got))


@lab.check("cpu.overlap", "Overlap benchmark runs (2 MPI ranks, emulated link)", points=0,
           backend="cpu", timeout=120, parent="cpu.build")
def cpu_overlap(ctx, _):
    ctx.mpirun(["overlap", "--repeats", str(REPEATS), "--json", ctx.out("overlap.json")],
               ranks=2)
    return ctx.load_json("overlap.json")


@lab.check("cpu.correct", "AllReduce and compute results exact in every overlapped step",
           points=30, backend="cpu", parent="cpu.overlap")
def cpu_correct(ctx, res):
    if res["status"] != "success":
        raise CheckFailed("lab11_overlap_step failed", expected="success",
                          found=f"{res['status']}: {res['error']}")
    expect("overlapped steps run", res["steps"], REPEATS)
    if res["wrong_sum"]:
        raise CheckFailed("the AllReduce result is wrong (was grad or sum touched while the "
                          "AllReduce was in flight?)", expected="0 wrong elements",
                          found=f"{res['wrong_sum']} wrong elements over {REPEATS} steps")
    if res["wrong_next"]:
        raise CheckFailed("the computed next[] is wrong or incomplete",
                          expected="0 wrong elements",
                          found=f"{res['wrong_next']} wrong elements over {REPEATS} steps")


def score_overlap(ctx, res):
    comp, comm, over = res["compute_s"], res["comm_s"], res["overlap_s"]
    base = [max(a, b) for a, b in zip(comp, comm)]
    ctx.metric("compute_s", comp)
    ctx.metric("comm_s", comm)
    ctx.plot("lab11-steps", {
        "compute alone": list(enumerate(c * 1e3 for c in comp)),
        "AllReduce alone": list(enumerate(c * 1e3 for c in comm)),
        "overlapped step": list(enumerate(c * 1e3 for c in over))},
        xlabel="repeat", ylabel="time (ms)", logx=False, title=f"lab11 ({res['backend']})")
    s, b = iter(over), iter(base)
    perf_ratio(ctx, student=lambda: next(s), baseline=lambda: next(b), repeats=len(over),
               higher_is_better=False, low=LOW, high=HIGH, unit="s",
               name="overlapped step vs max(compute, comm)")


@lab.check("cpu.perf", "Overlapped step <= 1.15 x max(compute, comm)", points=60,
           backend="cpu", kind="performance", parent="cpu.overlap")
def cpu_perf(ctx, res):
    ctx.log(f"link {res['link_gbps']} GB/s, segment {res['segment_s'] * 1e3:.3f} ms, "
            f"work {res['work']} rounds/element, your chunk {res['chunk']} elements")
    score_overlap(ctx, res)


@lab.check("gpu.overlap", "GPU: compute kernel and ncclAllReduce on two streams", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=180, parent="cpu.build")
def gpu_overlap(ctx, _):
    ctx.mpirun(["gpu", "--count", str(1 << 26), "--repeats", "11",
                "--json", ctx.out("gpu.json")], ranks=2, env={"NCCL_MAX_NCHANNELS": "4"})
    res = ctx.load_json("gpu.json")
    if res["status"] != "success":
        raise CheckFailed("the GPU step failed", expected="success",
                          found=f"{res['status']}: {res['error']}")
    expect("wrong AllReduce elements", res["wrong_sum"], 0)
    expect("wrong compute elements", res["wrong_next"], 0)
    return res


@lab.check("gpu.perf", "GPU: overlapped step <= 1.15 x max(kernel, AllReduce)", points=10,
           backend="gpu", kind="performance", needs={"gpus": 2}, parent="gpu.overlap")
def gpu_perf(ctx, res):
    ctx.log(f"NCCL_MAX_NCHANNELS={res['nccl_max_nchannels']}, work {res['work']}")
    score_overlap(ctx, res)
