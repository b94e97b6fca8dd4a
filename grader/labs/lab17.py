"""lab17: multi-rail network design: NCCL's rails on recorded servers, PXN, the point-to-point
chunk size, and one transfer striped over rails of equal and unequal speeds.

The harness reads the recorded topologies as NCCL sees them (path types, NCCL's bandwidths,
GDR at the default level) and prints them with the student's answers; the grader applies
NCCL's rules to the same servers (_lab17_nccl.py, from NVIDIA/nccl v2.28.9-1) and compares.
The routes' consequence is simulated: an AlltoAll between 32 DGX H100 nodes whose every
message follows the student's routes, against the reference routes, on a rail-optimised
fabric and on a leaf-spine with the same tapered spine. The striped transfer runs over rails
the harness drives (data never enters the student's program): every byte is checked, and
its time is paired with the rails' own rates measured in the same run: paced loopback
links on cpu, tbf-shaped veth rails between namespace nodes on net.
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _lab17_nccl as nccl  # noqa: E402

from gradelib import CheckFailed, Lab, expect, perf_samples  # noqa: E402

lab = Lab("lab17", title="多轨网络设计", program="lab17")

TOPO = "datasets/topologies"
FILES = ["hgx-a100.topo.txt", "hgx-h200.topo.txt", "hgx-a100-4nic.nccl.xml",
         "ibm-vpc-h100-vsi.nccl.xml", "aws-p5.48xlarge.nccl.xml"]
SYSTEMS = ["dgx-a100", "dgx-h100"]
CHANNELS = 4


def _servers():
    return [{"file": f"{TOPO}/{f}"} for f in FILES] + [{"system": s} for s in SYSTEMS]


def _where(case):
    return case.get("file", case.get("system", "")).split("/")[-1]


def _check_status(rows, cases):
    for r, c in zip(rows, cases):
        if r["status"] != "success":
            raise CheckFailed(f"{_where(c)}: your function failed", expected="success",
                              found=f"{r['status']}: {r.get('error', '')}")


# --- cpu: NCCL's rules -------------------------------------------------------------------------

LOCAL_ENVS = [{}, {"policy": "all"}, {"policy": "max:2"}]


@lab.check("cpu.local", "Local NICs and the NIC of every GPU per channel, as NCCL picks them "
           "(5 recorded servers, 2 simulated nodes, 3 NETDEVS policies)", points=10,
           backend="cpu", timeout=60)
def cpu_local(ctx):
    cases = [dict(s, **e) for s in _servers() for e in LOCAL_ENVS]
    rows = ctx.run_cases("server", cases)
    _check_status(rows, cases)
    for r, c in zip(rows, cases):
        s, env, where = nccl.Server(r), c, f"{_where(c)} {c.get('policy', 'auto')}"
        for g in range(s.G):
            got = [n for n in r["local_nics"][g * s.N:(g + 1) * s.N] if n >= 0]
            expect(f"{where}: local NICs of GPU{g}", got, nccl.local_nics(s, g))
        for n in range(s.N):
            got = [g for g in r["local_gpus"][n * s.G:(n + 1) * s.G] if g >= 0]
            expect(f"{where}: local GPUs of NIC {n}", got, nccl.local_gpus(s, n))
        for g in range(s.G):
            for ch in range(CHANNELS):
                expect(f"{where}: NIC of GPU{g} on channel {ch}",
                       r["gpu_nic_by_channel"][g * CHANNELS + ch], nccl.gpu_nic(s, env, g, ch))
        for n in range(s.N):
            expect(f"{where}: the GPU of NIC {n}", r["nic_gpu"][n], nccl.nic_gpu(s, env, n))


ROUTE_ENVS = [{}, {"pxn_disable": 1}, {"pxn_level": 1}, {"pxn_level": 0},
              {"pxn_level": 0, "cross_nic": 0}, {"pxn_disable": 1, "cross_nic": 0},
              {"pxn_level": 1, "cross_nic": 0}, {"pxn_c2c": 0, "pxn_level": 1},
              {"policy": "all", "channel": 1}, {"pxn_level": 1, "policy": "max:2", "channel": 3}]


def _route_cases():
    return [dict(s, **e) for s in _servers() for e in ROUTE_ENVS]


def _expected_routes(row, case):
    s = nccl.Server(row)
    ch = int(case.get("channel", 0))
    return [[nccl.p2p_route(s, case, g, s.dev[d], ch) for d in range(s.G)] for g in range(s.G)]


@lab.check("cpu.pxn", "Point-to-point NIC and PXN relay of every GPU pair (NCCL_PXN_DISABLE, "
           "NCCL_P2P_PXN_LEVEL, NCCL_CROSS_NIC, NCCL_PXN_C2C)", points=15, backend="cpu",
           timeout=60)
def cpu_pxn(ctx):
    cases = _route_cases()
    rows = ctx.run_cases("route", [{k: str(v) for k, v in c.items()} for c in cases])
    _check_status(rows, cases)
    for r, c in zip(rows, cases):
        want, G = _expected_routes(r, c), r["gpus"]
        env = " ".join(f"{k}={v}" for k, v in c.items() if k not in ("file", "system")) or \
            "defaults"
        for g in range(G):
            for d in range(G):
                got = (r["route_nic"][g * G + d], r["route_proxy"][g * G + d])
                if got != want[g][d]:
                    raise CheckFailed(f"{_where(c)} ({env}): GPU{g} sending to device {d} of "
                                      f"another node", expected=f"NIC {want[g][d][0]} driven "
                                      f"by GPU{want[g][d][1]}",
                                      found=f"NIC {got[0]} driven by GPU{got[1]}")


CHUNK_CASES = [dict(nnodes=n, all_nvlink=v, **e) for n in (1, 4) for v in (0, 1)
               for e in ({}, {"net": 1 << 20}, {"nvl": 1 << 20, "pci": 65536},
                         {"buff": 1 << 20}, {"net": 0x80000, "buff": 1 << 21})]


@lab.check("cpu.chunk", "Point-to-point chunk size (NCCL_P2P_NET_CHUNKSIZE and friends, "
           "NCCL_BUFFSIZE)", points=5, backend="cpu", timeout=30)
def cpu_chunk(ctx):
    rows = ctx.run_cases("chunk", CHUNK_CASES)
    for r, c in zip(rows, CHUNK_CASES):
        want = nccl.p2p_chunk({k: str(v) for k, v in c.items()}, c["nnodes"], c["all_nvlink"])
        expect(f"chunk size for {c}", r.get("chunk"), want)


# --- sim: why rails ---------------------------------------------------------------------------

FABRIC_NODES = 32                  # one DGX H100 SuperPOD scalable unit
FABRIC_BYTES = 1 << 28             # per GPU, spread over every GPU of the other nodes


@lab.check("sim.fabric", "AlltoAll of 32 DGX H100 on your routes: rail-optimised vs leaf-spine "
           "fabric, spine tapered 2:1, PXN on and off", points=15, backend="sim",
           kind="performance", timeout=120)
def sim_fabric(ctx):
    envs = [{}, {"pxn_disable": "1"}]
    routes = ctx.run_cases("route", [dict(system="dgx-h100", **e) for e in envs],
                           name="routes")
    cases = []
    for r, e in zip(routes, envs):
        s = nccl.Server(r)
        ref = _expected_routes(r, e)
        recv = [nccl.gpu_nic(s, e, h, 0) for h in range(s.G)]
        for fabric in ("rail", "leafspine"):
            cases.append(dict(system="dgx-h100", nodes=FABRIC_NODES, fabric=fabric,
                              oversubscription=2, bytes=FABRIC_BYTES,
                              ref=",".join(f"{n}:{p}" for row in ref for n, p in row),
                              recv=",".join(map(str, recv)), **e))
    rows = ctx.run_cases("fabric", cases, timeout=100)
    _check_status(rows, cases)
    mine, theirs = [], []
    for r, c in zip(rows, cases):
        label = f"{c['fabric']} {'PXN off' if c.get('pxn_disable') else 'PXN on'}"
        ctx.metric(f"{label} (ms)", round(r["seconds"] * 1e3, 3))
        ctx.metric(f"{label} reference (ms)", round(r["reference_seconds"] * 1e3, 3))
        mine.append(r["seconds"])
        theirs.append(r["reference_seconds"])
    # The same routes give the same time: the worst ratio of the four runs is scored.
    worst = min(t / m for m, t in zip(mine, theirs))
    perf_samples(ctx, student=[worst], baseline=[1.0], low=0.9, high=0.99, unit="",
                 name="reference time / your time, worst of 4 fabrics")


# --- the striped transfer -----------------------------------------------------------------------

# Correctness runs fast rails (MB/s); the awkward sizes include one byte and 5 MiB + 3.
STRIPE_RATES = ["200", "200,200", "150,100,50", "100,100,100,100", "300,30"]


@lab.check("cpu.stripe", "One transfer striped over 1 to 4 rails, equal and unequal: every "
           "byte once, where it belongs", points=15, backend="cpu", timeout=120)
def cpu_stripe(ctx):
    for rates in STRIPE_RATES:
        data = ctx.run_lab("stripe", ["--rates", rates], ranks=2, backend="cpu", timeout=40,
                           name=f"stripe-{rates.replace(',', '-')}.json")
        for row in data["rows"]:
            where = f"{row['bytes']} bytes over rails of {rates} MB/s"
            if row["status"] != "success":
                raise CheckFailed(f"{where}: {row.get('error', '')}", expected="success",
                                  found=row["status"])
            expect(f"{where}: wrong bytes at the receiver", row["wrong_bytes"], 0)
        expect(f"sizes run over rails of {rates} MB/s", len(data["rows"]), 4)


def _score_stripe(ctx, data, low, high):
    row = data["rows"][0]
    if row["status"] != "success" or row["wrong_bytes"]:
        raise CheckFailed(f"your transfer failed: {row.get('error', '')}", expected="success",
                          found=f"{row['status']}, {row['wrong_bytes']} wrong bytes")
    ctx.metric("rail_MBps", row.get("rail_mbs"))
    perf_samples(ctx, student=row["ideal_s"], baseline=row["student_s"], low=low, high=high,
                 unit="s", name="the rails' ideal time / your time")


@lab.check("cpu.uneven", "Rails of 40, 20 and 10 MB/s (paced): your time vs the sum of the "
           "rails' measured rates", points=10, backend="cpu", kind="performance", timeout=90)
def cpu_uneven(ctx):
    data = ctx.run_lab("stripeperf", ["--rates", "40,20,10", "--bytes", "4M", "--rounds", "5",
                                      "--baseline", "each"], ranks=2, backend="cpu", timeout=60)
    _score_stripe(ctx, data, low=0.6, high=0.85)


def _net(ctx, rails, rate, rates_mbs, nbytes, baseline, name):
    left = max(10, int(ctx.check.timeout) - 15)
    ctx.netrun(["stripeperf", "--link", "net", "--rates", rates_mbs, "--bytes", nbytes,
                "--rounds", "5", "--baseline", baseline, "--json", ctx.out(name),
                "--deadline", str(left)],
               nodes=2, ranks_per_node=1, rate=rate, rails=rails, burst="32kb",
               timeout=left + 10)
    data = ctx.load_json(name)
    if data.get("status") != "ok":
        raise CheckFailed(f"the program failed: {data.get('error', '')}", expected="ok",
                          found=data.get("status"))
    return data


@lab.check("net.stripe", "2 namespace nodes, 4 rails of 100 Mbit/s: aggregate vs 4 x one rail",
           points=15, backend="net", kind="performance", timeout=120)
def net_stripe(ctx):
    data = _net(ctx, 4, "100mbit", "12.5,12.5,12.5,12.5", "8M", "one", "stripe.json")
    _score_stripe(ctx, data, low=0.7, high=0.9)


@lab.check("net.uneven", "2 namespace nodes, rails of 200, 100 and 50 Mbit/s: aggregate vs the "
           "sum of the rails' measured rates", points=15, backend="net", kind="performance",
           timeout=120)
def net_uneven(ctx):
    data = _net(ctx, 3, "200mbit,100mbit,50mbit", "25,12.5,6.25", "4M", "each", "uneven.json")
    _score_stripe(ctx, data, low=0.7, high=0.9)
