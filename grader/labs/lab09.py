"""lab09: an intra-node shared-memory transport (a lock-free SPSC chunked ring) and an
AllReduce on it.

The rings live in the region the ranks' student programs share (cl_shared_region); the
harness (labs/lab09/harness_payload.c) fills every payload with fresh bytes in the sender's private
buffer, which the receiving program cannot see, and checks every byte that arrives, so
every verdict comes from the harness's JSON. The ring runs between two ends taking turns as
fibers of a ThreadSanitizer build of the student's program (memory order), between two processes under
a random-size stress test whose counters wrap past 2^64, under an AllReduce on 1 to 4 ranks,
and against memcpy and Open MPI's shared-memory path in the same run, in the ring geometry
the student chose.
"""

import os
import statistics

from gradelib import CheckCrashed, CheckFailed, Lab, expect, perf_samples

lab = Lab("lab09", title="共享内存通信: 无锁 SPSC 环形缓冲区", program="lab09")

STRESS = ((4, 1000), (1, 64), (2, 4096))   # (slots, chunk): small rings that fill and wrap
MIB = 1 << 20


def row_of(data, what):
    rows = data.get("rows", [])
    if len(rows) != 1:
        raise CheckFailed(f"{what}: the harness reported {len(rows)} rows", expected="1",
                          found=str(len(rows)))
    return rows[0]


def check_exchange(row, data, what):
    """The harness's verdict on every message of one exchange."""
    if row["status"] != "success":
        raise CheckFailed(f"{what}: your exchange returned an error", expected="success",
                          found=f"{row['status']}: {row.get('error', '')}".strip())
    if row.get("forbidden", "-") not in ("-", "", None):
        raise CheckFailed(f"{what}: an operation this lab does not allow",
                          expected="only your rings", found=row["forbidden"])
    first = row.get("first_bad", "")
    expect(f"{what}: messages delivered and checked", row["messages"],
           data["expected_messages"])
    for key, label in (("torn", "messages with wrong bytes (torn)"),
                       ("lost_or_reordered", "messages that hold another message (lost, "
                                             "duplicated or reordered)"),
                       ("overrun", "messages written past their end")):
        if row[key]:
            raise CheckFailed(f"{what}: {label}", expected="0",
                              found=f"{row[key]}; first: {first}" if first else str(row[key]))


# --- correctness ------------------------------------------------------------------------

@lab.check("cpu.race", "No data race under ThreadSanitizer (acquire/release)", points=20,
           backend="cpu", timeout=120)
def cpu_race(ctx):
    tsan = os.path.join(os.path.dirname(ctx.program), "lab09-student-tsan")
    if not os.path.exists(tsan):
        raise CheckFailed("the ThreadSanitizer build of your program is missing",
                          expected=os.path.relpath(tsan, ctx.root), found="no file")
    args = ["--student", tsan, "--nslots", "4", "--chunk", "200", "--messages", "3000"]
    # ThreadSanitizer reserves terabytes of address space: no address-space limit here.
    saved, ctx.limits.mem_mb = ctx.limits.mem_mb, 0
    try:
        try:
            data = ctx.run_lab("race", args, backend="cpu", timeout=25)
        except CheckCrashed:
            last = ctx.results[-1].stderr if ctx.results else ""
            if "ThreadSanitizer" not in last or not os.path.exists("/usr/bin/setarch"):
                raise
            # Some kernels randomise mappings more than this ThreadSanitizer expects.
            res = ctx.run(["setarch", os.uname().machine, "-R", ctx.program, "race", *args,
                           "--json", ctx.out("race.json"), "--deadline", "20"], timeout=25,
                          check=False)
            data = ctx.load_json("race.json")
            if data.get("status") != "ok":
                ctx.require_ok(res)
                raise CheckFailed(f"the race check failed: {data.get('error', '')}",
                                  expected="it runs", found=data.get("status", "no status"))
    finally:
        ctx.limits.mem_mb = saved
    row = row_of(data, "race")
    if row["race"] != "none":
        text = "\n".join(r.stderr for r in ctx.results)
        where = [line.strip() for line in text.splitlines() if " lab09_" in line][:4]
        raise CheckFailed("ThreadSanitizer found a data race between the two ends of a ring",
                          expected="the payload published by a release store of head and read "
                                   "only after an acquire load of it; a slot freed by a "
                                   "release store of tail after its payload was copied out",
                          found="; ".join(where) if where else "a data race (see the log)")
    check_exchange(row, data, "two ends, 4 slots of 200 B")


@lab.check("cpu.stress", "Stress: random sizes, wrap-around, no torn or lost message",
           points=30, backend="cpu", timeout=120)
def cpu_stress(ctx):
    for nslots, chunk in STRESS:
        what = f"2 processes, {nslots} slot(s) of {chunk} B"
        data = ctx.run_lab("stress", ["--nslots", nslots, "--chunk", chunk, "--messages", 3000],
                           ranks=2, backend="cpu", timeout=15)
        row = row_of(data, what)
        check_exchange(row, data, what)
        ctx.metric(f"bytes_{nslots}x{chunk}", row["bytes"])


@lab.check("cpu.allreduce", "AllReduce on the rings, 1 to 4 ranks", points=20, backend="cpu",
           timeout=120)
def cpu_allreduce(ctx):
    for ranks in (1, 2, 3, 4):
        data = ctx.run_lab("allreduce", ranks=ranks, backend="cpu", timeout=15)
        rows = data["rows"]
        if not rows:
            raise CheckFailed(f"AllReduce on {ranks} ranks: no test ran", expected="56 tests",
                              found="none")
        for r in rows:
            what = f"AllReduce on {ranks} rank(s), {r['count']} x {r['type']} {r['redop']}"
            if r["status"] != "success":
                raise CheckFailed(f"{what}: your function returned an error",
                                  expected="success",
                                  found=f"{r['status']}: {r.get('error', '')}".strip())
            if r.get("forbidden", "-") not in ("-", "", None):
                raise CheckFailed(f"{what}: an operation this function may not use",
                                  expected="only your rings and local work",
                                  found=r["forbidden"])
            expect(f"{what}: wrong elements", r["#wrong"], 0)


# --- performance: the transport, in the geometry you chose --------------------------------

def bench(ctx, nbytes, repeats):
    data = ctx.run_lab("bench", ["--bytes", nbytes, "--repeats", repeats], ranks=2,
                       backend="cpu", timeout=100)
    row = row_of(data, "bench")
    if row["corrupt_bytes"]:
        raise CheckFailed("data arrived wrong during the benchmark", expected="0 wrong bytes",
                          found=str(row["corrupt_bytes"]))
    ctx.metric("geometry", {"nslots": row["nslots"], "chunk": row["chunk"]})
    return row


@lab.check("cpu.perf_memcpy", "Ring bandwidth vs single-thread memcpy (64 MiB)", points=15,
           backend="cpu", kind="performance", timeout=150)
def cpu_perf_memcpy(ctx):
    # 64 MiB is larger than the last-level cache of common servers: memcpy then measures
    # memory bandwidth on one core, and the ring moves every chunk between two. Where the two
    # cores share a cache the reference ring runs at 1.0-1.1x memcpy; where they sit across
    # the chip's interconnect (a VM's vCPUs can land there from one run to the next) it fell
    # to 0.27x on the same machine. Full marks from 0.2; a ring of 64 B chunks stays near 0.03.
    row = bench(ctx, "64M", 9)
    ctx.metric("mpi_gbps_median", statistics.median(row["mpi_gbps"]))
    perf_samples(ctx, student=row["ring_gbps"], baseline=row["memcpy_gbps"], low=0.08,
                 high=0.2, unit="GB/s",
                 name=f"ring ({row['nslots']} x {row['chunk']} B) vs memcpy, 64 MiB")


@lab.check("cpu.perf_mpi", "Ring bandwidth vs Open MPI's shared-memory path (4 MiB)",
           points=15, backend="cpu", kind="performance", timeout=150)
def cpu_perf_mpi(ctx):
    # The ring copies twice where MPI's CMA path copies once, so the ratio depends on whether
    # the two cores share a cache that holds the slots: the reference ring measured 0.7-3x
    # on different two-core machines; rings of 64 B or 4 KiB chunks about 0.35x.
    row = bench(ctx, "4M", 9)
    perf_samples(ctx, student=row["ring_gbps"], baseline=row["mpi_gbps"], low=0.38, high=0.5,
                 unit="GB/s", name=f"ring ({row['nslots']} x {row['chunk']} B) vs MPI "
                                   f"send/recv, 4 MiB")
    ctx.plot("lab09-bandwidth", {
        "your ring": [(i + 1, v) for i, v in enumerate(row["ring_gbps"])],
        "MPI send/recv": [(i + 1, v) for i, v in enumerate(row["mpi_gbps"])],
        "memcpy, 1 thread": [(i + 1, v) for i, v in enumerate(row["memcpy_gbps"])]},
        xlabel="sample (interleaved)", ylabel="bandwidth (GB/s)", logx=False,
        title="lab09: 4 MiB, rank 0 -> rank 1")
