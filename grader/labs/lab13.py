"""lab13: RDMA verbs basics: an RC queue pair, RDMA WRITE bandwidth, SEND/RECV latency.

The student's program runs on two ranks (client and server), on the emulated verbs
provider ("cpu" checks: the emulated HCA in the harness checks each step and keeps the
model's time) or on this machine's RDMA NIC ("nic" checks, skipped without one; the
baseline there is perftest's ib_write_bw in the same check). Every byte the student's code
moves is a fresh byte the harness wrote and checks.
"""

import os
import re
import statistics

from gradelib import CheckFailed, Lab, expect, perf_samples

lab = Lab("lab13", title="RDMA verbs 基础: RC 队列对、RDMA WRITE 带宽与 SEND/RECV 延迟",
          program="lab13")

ROLE = {0: "client (rank 0)", 1: "server (rank 1)"}
STEP_TEXT = {"open": "lab13_open", "init": "lab13_init (RESET -> INIT)",
             "exchange": "lab13_exchange", "rtr": "lab13_rtr (INIT -> RTR)",
             "rts": "lab13_rts (RTR -> RTS)", "probe": "a 64 KiB RDMA WRITE over the connection",
             "close": "lab13_close"}


def step_rows(data):
    return {r["step"]: r for r in data["rows"]}


def require_steps(data, names):
    """Every named step ran and passed the harness's checks on both ranks."""
    rows = step_rows(data)
    for name in names:
        r = rows.get(name)
        if r is None:
            raise CheckFailed(f"step {name} did not run", expected="every step runs",
                              found="no row for it")
        for k in (0, 1):
            if r[f"status{k}"] != "ok" or r[f"checks{k}"] != "ok":
                raise CheckFailed(f"{STEP_TEXT.get(name, name)} failed on the {ROLE[k]}",
                                  expected="it succeeds and the HCA agrees with it",
                                  found=r[f"why{k}"] or r[f"status{k}"])


def connect_run(ctx, link, verbs="emu"):
    return ctx.run_lab("connect", ["--link", link, "--verbs", verbs], ranks=2, backend="cpu")


@lab.check("cpu.connect", "Connect the two ranks (emulated HDR InfiniBand)", points=0,
           backend="cpu", timeout=60)
def cpu_connect(ctx):
    return connect_run(ctx, "ib")


@lab.check("cpu.open", "Open the device, PD, MR, CQ and RC QP; describe the endpoint",
           points=10, backend="cpu", parent="cpu.connect")
def cpu_open(ctx, data):
    require_steps(data, ["open"])


@lab.check("cpu.states", "RESET -> INIT -> RTR -> RTS with the right attributes; data flows",
           points=15, backend="cpu", parent="cpu.connect")
def cpu_states(ctx, data):
    require_steps(data, ["open", "init", "exchange", "rtr", "rts", "probe"])


@lab.check("cpu.exchange", "Exchange QPN, PSN, LID/GID, rkey and address over TCP", points=5,
           backend="cpu", parent="cpu.connect")
def cpu_exchange(ctx, data):
    require_steps(data, ["open", "exchange"])


@lab.check("cpu.close", "Tear down every object explicitly, in an order the HCA accepts",
           points=5, backend="cpu", parent="cpu.connect")
def cpu_close(ctx, data):
    require_steps(data, ["open", "init", "exchange", "rtr", "rts", "probe", "close"])


@lab.check("cpu.roce", "The same on RoCE v2: the RoCE v2 IPv4 GID, GRH, the port's MTU",
           points=10, backend="cpu", timeout=60)
def cpu_roce(ctx):
    require_steps(connect_run(ctx, "roce"), ["open", "init", "exchange", "rtr", "rts", "probe",
                                            "close"])


@lab.check("cpu.write", "RDMA WRITE: fresh data, exact sizes and depth, failures reported",
           points=15, backend="cpu", timeout=90)
def cpu_write(ctx):
    data = ctx.run_lab("write", ranks=2, backend="cpu")
    for r in data["rows"]:
        what = f"case '{r['case']}' ({r['total']} B as {r['msg']} B messages, depth {r['depth']})"
        if "must fail" in r["case"]:
            if r["status"] == "ok":
                raise CheckFailed(f"{what}: the WRITE to a wrong rkey failed at the responder "
                                  "but lab13_write reported success",
                                  expected="a failure naming the completion's status",
                                  found="success")
            if "remote access error" not in r["why"]:
                raise CheckFailed(f"{what}: the reason does not name the completion's status",
                                  expected="ibv_wc_status_str(wc.status): 'remote access "
                                           "error'", found=r["why"] or "no reason")
            continue
        if r["status"] != "ok":
            raise CheckFailed(f"{what} failed", expected="success", found=r["why"])
        expect(f"{what}: bytes that arrived wrong", r["wrong_bytes"], 0)
        expect(f"{what}: RDMA WRITEs completed", r["writes"], r["total"] // r["msg"])
        expect(f"{what}: size of each WRITE (smallest)", r["min_len"], r["msg"])
        expect(f"{what}: size of each WRITE (largest)", r["max_len"], r["msg"])
        expect(f"{what}: failed completions", r["errors"], 0)
        if r["max_outstanding"] > r["depth"]:
            raise CheckFailed(f"{what}: more WRITEs outstanding than the depth",
                              expected=f"at most {r['depth']}", found=str(r["max_outstanding"]))


@lab.check("cpu.pingpong", "SEND/RECV ping-pong: fresh data both ways, one message each way",
           points=10, backend="cpu", timeout=90, timed=True)
def cpu_pingpong(ctx):
    data = ctx.run_lab("lat", ranks=2, backend="cpu")
    for r in data["rows"]:
        what = f"{r['bytes']} B ping-pong"
        for k in (0, 1):
            if r[f"status{k}"] != "ok":
                raise CheckFailed(f"{what} failed on the {ROLE[k]}", expected="success",
                                  found=r[f"why{k}"] or r[f"status{k}"])
            expect(f"{what}: bytes the {ROLE[k]} received wrong", r[f"wrong_bytes{k}"], 0)
            expect(f"{what}: SENDs completed by the {ROLE[k]}", r[f"sends{k}"], r["iters"])
            expect(f"{what}: receives completed by the {ROLE[k]}", r[f"recvs{k}"], r["iters"])
    return data


@lab.check("cpu.bw", "WRITE bandwidth, 4 KiB x 16: your loop vs the harness's (model)",
           points=10, backend="cpu", kind="performance", timeout=90)
def cpu_bw(ctx):
    data = ctx.run_lab("bw", ["--bytes", "4K", "--depth", "16", "--repeats", "3"], ranks=2,
                       backend="cpu")
    row = data["rows"][0]
    if row["status"] != "ok" or row["wrong_bytes"]:
        raise CheckFailed("the WRITEs failed or delivered wrong data",
                          expected="success, every byte right",
                          found=row["why"] or f"{row['wrong_bytes']} wrong bytes")
    perf_samples(ctx, student=row["student_gbps"], baseline=row["base_gbps"], low=0.7,
                 high=0.9, unit="GB/s", name="RDMA WRITE bandwidth (emulated link, model)")


@lab.check("cpu.latency", "8-byte one-way latency: your ping-pong vs the harness's (model)",
           points=5, backend="cpu", kind="performance", parent="cpu.pingpong")
def cpu_latency(ctx, data):
    rows = [r for r in data["rows"] if r["bytes"] == 8]
    if not rows:
        raise CheckFailed("no 8-byte ping-pong row", expected="one", found="none")
    perf_samples(ctx, student=[r["one_way_us"] for r in rows],
                 baseline=[r["reference_us"] for r in rows], higher_is_better=False, low=0.7,
                 high=0.9, unit="us", name="one-way latency (emulated link, model)")


@lab.check("cpu.plan", "Your plan: >= 90% of the link with at most twice the fewest bytes in "
           "flight", points=15, backend="cpu", timeout=90)
def cpu_plan(ctx):
    data = ctx.run_lab("plan", ranks=2, backend="cpu")
    if not data.get("plan_valid"):
        raise CheckFailed("lab13_write_plan is not a plan",
                          expected="msg_bytes a power of two from 256 B to 1 MiB, depth 1..128",
                          found=f"msg_bytes {data.get('plan_msg_bytes')}, depth "
                                f"{data.get('plan_depth')}")
    r = data["rows"][0]
    if r["status"] != "ok" or r["wrong_bytes"]:
        raise CheckFailed("your WRITEs at your plan failed", expected="success",
                          found=r["why"] or f"{r['wrong_bytes']} wrong bytes")
    if r["max_outstanding"] > r["depth"]:
        raise CheckFailed("your loop kept more WRITEs outstanding than the plan's depth",
                          expected=f"at most {r['depth']}", found=str(r["max_outstanding"]))
    share, slack = data["plan_share"], data["plan_slack"]
    ctx.metric("share_of_link", r["share"])
    ctx.metric("in_flight", r["in_flight"])
    ctx.metric("fewest_in_flight", r["fewest_in_flight"])
    ctx.log(f"plan {r['msg']} B x {r['depth']}: {r['gbps']:.2f} GB/s of {r['link_gbps']:.1f} "
            f"({r['share']:.1%}); {r['in_flight']} B in flight, the fewest that reach "
            f"{share:.0%} with the harness's loop: {r['fewest_in_flight']} B "
            f"({r['fewest_msg']} B x {r['fewest_depth']})")
    curves = {}
    for item in filter(None, data.get("reference_curve", "").split(",")):
        msg, depth, gbps = item.split(":")
        curves.setdefault(f"harness loop, {int(msg) // 1024} KiB", []).append(
            (int(msg) * int(depth), float(gbps)))
    curves["your plan"] = [(r["in_flight"], r["gbps"])]
    ctx.plot("lab13-plan", curves, xlabel="bytes in flight (message size x depth)",
             ylabel="RDMA WRITE bandwidth (GB/s, model)",
             title=f"lab13: {share:.0%} of the link needs {r['fewest_in_flight']} B in flight")
    if r["share"] < share:
        raise CheckFailed("your plan does not reach the share of the link",
                          expected=f">= {share:.0%} of {r['link_gbps']:.1f} GB/s",
                          found=f"{r['gbps']:.2f} GB/s ({r['share']:.1%})")
    if r["in_flight"] > slack * r["fewest_in_flight"]:
        raise CheckFailed("your plan keeps far more data in flight than the link needs",
                          expected=f"msg_bytes x depth <= {slack:g} x {r['fewest_in_flight']} B",
                          found=f"{r['msg']} x {r['depth']} = {r['in_flight']} B")


# --- a real RDMA NIC ----------------------------------------------------------------------

def first_device():
    try:
        devs = sorted(os.listdir("/sys/class/infiniband"))
    except OSError:
        devs = []
    return devs[0] if devs else ""


@lab.check("nic.connect", "Connect, write and check on this machine's RDMA NIC", points=10,
           backend="nic", needs={"nics": 1}, timeout=120)
def nic_connect(ctx):
    dev = first_device()
    data = ctx.run_lab("connect", ["--verbs", "nic", "--device", dev], ranks=2, backend="cpu")
    require_steps(data, ["open", "init", "exchange", "rtr", "rts", "probe", "close"])


def ib_write_bw(ctx, dev, size, depth):
    """One ib_write_bw run (server and client on this machine); GB/s of its average."""
    args = ["ib_write_bw", "-d", dev, "-s", str(size), "-t", str(depth), "-n", "2000", "-F",
            "--report_gbits"]
    server = ctx.spawn(args)
    res = ctx.run(args + ["127.0.0.1"], timeout=60, check=False)
    server.wait(10)
    for line in res.stdout.splitlines():
        words = line.split()
        if len(words) >= 4 and words[0] == str(size) and re.match(r"^[\d.]+$", words[3]):
            return float(words[3]) / 8.0
    raise CheckFailed("ib_write_bw printed no result line", expected="its table",
                      found=res.stderr_tail(3) or "nothing")


@lab.check("nic.bw", "WRITE bandwidth on the NIC vs perftest's ib_write_bw (64 KiB x 16)",
           points=10, backend="nic", kind="performance", timeout=240,
           needs={"nics": 1, "commands": ["ib_write_bw"]})
def nic_bw(ctx):
    dev = first_device()
    mine, base = [], []
    for _ in range(3):  # interleaved: baseline, yours, baseline, ...
        base.append(ib_write_bw(ctx, dev, 65536, 16))
        data = ctx.run_lab("bw", ["--verbs", "nic", "--device", dev, "--bytes", "64K",
                                  "--depth", "16", "--repeats", "1"], ranks=2, backend="cpu")
        row = data["rows"][0]
        if row["status"] != "ok" or row["wrong_bytes"]:
            raise CheckFailed("your WRITEs failed on the NIC", expected="success",
                              found=row["why"] or f"{row['wrong_bytes']} wrong bytes")
        mine.append(statistics.median(row["student_gbps"]))
    perf_samples(ctx, student=mine, baseline=base, low=0.7, high=0.9, unit="GB/s",
                 name="RDMA WRITE bandwidth (NIC)")
