"""lab16: congestion control (DCQCN).

sim: the harness models the switch port (egress queue, ECN marking with the student's
Kmin/Kmax/Pmax, the notification point, PFC per ingress port) and calls the student's
reaction point once per simulated microsecond for every flow. sim.rp replays fresh random
events against the paper's rules, written again below; sim.incast.* run the closed loop
with the student's settings for four ports, and the paper's settings beside them at 100 Gb/s.

net: UDP senders in network namespaces pace themselves with the student's reaction point
on the ECN marks of a real tc RED queue (the receiver is the harness: it reads every
packet's ECN bits with IP_RECVTOS and sends CNPs); measured against fixed-rate senders.
"""

import random
import shutil
import subprocess

from gradelib import CheckFailed, Lab, answers, expect, perf_samples

lab = Lab("lab16", title="拥塞控制 (DCQCN)", program="lab16",
          student_files=["labs/lab16/lab16.c", "labs/lab16/answers.txt"])


# --- the reaction point, from the paper's rules (Zhu et al. 2015, section 3) -------------

class ReactionPoint:
    """One flow's RP, stepped as section 1 of the handout says."""

    def __init__(self, p, line):
        self.p, self.line = p, line
        self.rc = self.rt = line
        self.alpha = 1.0
        self.ta = self.tt = self.by = 0.0
        self.nt = self.nb = 0

    def _increase(self):
        p = self.p
        lo, hi = min(self.nt, self.nb), max(self.nt, self.nb)
        if lo >= p["f"]:
            self.rt += (lo - p["f"] + 1) * p["rhai"] / 1000
        elif hi >= p["f"]:
            self.rt += p["rai"] / 1000
        self.rt = min(self.rt, self.line)
        self.rc = (self.rt + self.rc) / 2

    def step(self, cnp, sent):
        p = self.p
        if cnp:
            self.rt = self.rc
            self.rc *= 1 - self.alpha / 2
            self.alpha = (1 - p["g"]) * self.alpha + p["g"]
            self.rc = max(self.rc, p["min_rate"] / 1000)
            self.ta = self.tt = self.by = 0.0
            self.nt = self.nb = 0
            return
        self.ta += 1
        while self.ta >= p["alpha_us"]:
            self.alpha *= 1 - p["g"]
            self.ta -= p["alpha_us"]
        self.tt += 1
        while self.tt >= p["timer_us"]:
            self.tt -= p["timer_us"]
            self.nt += 1
            self._increase()
        self.by += sent
        while self.by >= p["byte_kb"] * 1000:
            self.by -= p["byte_kb"] * 1000
            self.nb += 1
            self._increase()


def rp_replay(p, line, cnp, sent, steps):
    """Returns the (rc, rt, alpha) of every step of one flow."""
    rp, out = ReactionPoint(p, line), []
    for t in range(steps):
        rp.step(cnp[t], sent[t])
        out.append((rp.rc, rp.rt, rp.alpha))
    return out


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), 1e-3)


def replay_incast(row, line):
    """Replays the flow the harness recorded in an incast: its CNPs and pauses, the bytes it
    sent at its own rate; returns a mismatch description or None."""
    p = dict(g=row["g"], alpha_us=row["alpha_us"], timer_us=row["timer_us"],
             byte_kb=row["byte_kb"], f=row["f"], rai=row["rai_mbps"], rhai=row["rhai_mbps"],
             min_rate=row["min_rate_mbps"])
    cnp, paused = set(row["replay_cnp"]), set(row["replay_paused"])
    want = dict(zip(row["replay_t"], zip(row["replay_rc"], row["replay_rt"],
                                           row["replay_alpha"])))
    rp = ReactionPoint(p, line)
    for t in range(row["replay_start"], int(max(want)) + 1):
        rp.step(t in cnp, 0 if t in paused else rp.rc * 125)
        if t in want:
            got = want[t]
            for name, a, b in (("rate", rp.rc, got[0]), ("target", rp.rt, got[1]),
                               ("alpha", rp.alpha, got[2])):
                if not close(a, b):
                    return (f"flow {row['replay_flow']} at {t} us: {name} {b:.9g}, the rules "
                            f"give {a:.9g}")
    return None


def random_params(rng, lively=False):
    """Fresh settings. lively: a fast recovery of 2-3 events, a timer and a byte counter that
    fire often and a small hyper-increase step, so that fast recovery and the hyper increase
    (i steps of R_HAI) both show within the run, under the line rate."""
    params = dict(g=rng.choice([1 / 512, 1 / 256, 1 / 64, 1 / 16]),
                  alpha_us=rng.choice([1, 10, 55]), timer_us=rng.choice([7, 20, 55]),
                  byte_kb=rng.choice([20, 64, 150]), f=rng.randint(1, 5),
                  rai=rng.choice([5, 40, 100]), rhai=rng.choice([50, 400, 1000]),
                  min_rate=rng.choice([10, 100, 1000]))
    if lively:
        params.update(f=rng.randint(2, 3), timer_us=rng.choice([7, 20]),
                      byte_kb=rng.choice([20, 64]), rhai=rng.choice([50, 400]))
    return params


@lab.check("sim.rp", "Reaction point: every step's rate, target and alpha as the paper's rules",
           points=30, backend="sim")
def sim_rp(ctx):
    rng = random.Random()
    steps, flows = 3000, 2
    lively = rng.choice([100, 400])
    cases = [dict(seed=rng.randrange(1 << 30), steps=steps, flows=flows, line=line,
                  **random_params(rng, line == lively)) for line in (25, 100, 400)]
    rows = ctx.run_cases("rp", cases)
    for case, row in zip(cases, rows):
        what = f"line {case['line']} Gb/s, " + ", ".join(
            f"{k}={case[k]:.4g}" for k in ("g", "alpha_us", "timer_us", "byte_kb", "f", "rai",
                                            "rhai", "min_rate"))
        expect(f"{what}: status", row["status"], "success")
        for i in range(flows):
            sl = slice(i * steps, (i + 1) * steps)
            want = rp_replay(case, case["line"], row["cnp"][sl], row["bytes"][sl], steps)
            got = list(zip(row["rc"][sl], row["rt"][sl], row["alpha"][sl]))
            for t, (w, g) in enumerate(zip(want, got)):
                for name, a, b in zip(("rate", "target rate", "alpha"), w, g):
                    if not close(a, b):
                        cnps = [s for s in range(max(0, t - 60), t + 1) if row["cnp"][sl][s]]
                        raise CheckFailed(
                            f"{what}: flow {i}, step {t}: {name}", expected=f"{a:.9g}",
                            found=f"{b:.9g}", details=f"CNPs in the 60 steps before: {cnps}; "
                            f"bytes sent at step {t}: {row['bytes'][sl][t]:.0f}; "
                            f"the step before: rate {got[t - 1][0] if t else case['line']:.9g}, "
                            f"target {got[t - 1][1] if t else case['line']:.9g}, alpha "
                            f"{got[t - 1][2] if t else 1:.9g}")


# --- the closed loop --------------------------------------------------------------------

# Four ports an operator might run DCQCN on: the line rate, the fabric's round trip, the
# PFC thresholds of the switch's ingress ports and the queue the owner accepts (KB).
PORTS = {
    "25g": dict(line=25, rtt=16, xoff=60, xon=50, qbound=100),
    "100g": dict(line=100, rtt=8, xoff=120, xon=100, qbound=150),
    "200g": dict(line=200, rtt=5, xoff=250, xon=200, qbound=300),
    "400g": dict(line=400, rtt=4, xoff=400, xon=300, qbound=500),
}
TARGETS = "utilisation >= 0.95, Jain >= 0.95, 99th-percentile queue <= the bound, no PFC pause"


def misses(row, port):
    out = []
    if row.get("settings") != "valid":
        return [f"settings: {row.get('settings', row.get('error', '?'))}"]
    if row["rate_out_of_range"]:
        out.append(f"{row['rate_out_of_range']} steps with a rate outside [0, line]")
    if row["util"] < 0.95:
        out.append(f"utilisation {row['util']:.3f}")
    if row["jain"] < 0.95:
        out.append(f"Jain {row['jain']:.3f}")
    if row["q_p99_kb"] > port["qbound"]:
        out.append(f"queue {row['q_p99_kb']:.0f} KB > {port['qbound']}")
    if row["pauses"]:
        out.append(f"{row['pauses']} PFC pauses")
    return out


def incast_check(name, port):
    def check(ctx):
        rng = random.Random()
        flows = [2, rng.choice([3, 4]), rng.choice([6, 8, 12]), rng.choice([24, 32])]
        cases = [dict(port, flows=n, ms=60, stagger=rng.choice([100, 200, 300]),
                      seed=rng.randrange(1 << 30)) for n in flows]
        # Yours first, so an unfinished lab16_tune fails at once; a failure shows your
        # command, not that of the paper's settings run after it.
        yours = ctx.run_cases("incast", cases, name="yours")
        command = ctx.commands[-1]
        if yours[0].get("status", "success") != "success":
            raise CheckFailed("lab16_tune failed", expected="success",
                              found=f"{yours[0].get('status')}: {yours[0].get('error', '')}",
                              command=command)
        # The paper's settings on the same scenarios, for the picture beside yours (one port:
        # each run costs as much as yours).
        paper = None
        if name == "100g":
            paper = ctx.run_cases("incast", [dict(c, settings="paper") for c in cases],
                                  name="paper")
            ctx.metric("paper_settings_meet_targets", sum(not misses(r, port) for r in paper))
        ctx.metric("utilisation", [r.get("util") for r in yours])
        ctx.metric("jain", [r.get("jain") for r in yours])
        ctx.metric("queue_p99_kb", [r.get("q_p99_kb") for r in yours])
        if name == "100g":
            plot_traces(ctx, cases, yours, paper)
        if any(row.get("settings") != "valid" for row in yours):
            row = next(r for r in yours if r.get("settings") != "valid")
            raise CheckFailed(f"your settings for the {port['line']} Gb/s port",
                              expected="valid settings", found=misses(row, port)[0],
                              command=command)
        for case, row in zip(cases, yours):
            off = replay_incast(row, port["line"])
            if off:
                raise CheckFailed(f"{case['flows']} flows into a {port['line']} Gb/s port: "
                                  "your reaction point did not follow the rules of section 1",
                                  expected="every flow steps as in sim.rp", found=off,
                                  command=command)
        # The decision's consequence: a share of the points per scenario that meets every
        # target (a reaction point that breaks the rules above earns nothing).
        lines = []
        for case, row in zip(cases, yours):
            bad = misses(row, port)
            ctx.perf_fractions.append(0.0 if bad else 1.0)
            lines.append(f"{case['flows']} flows: " + ("; ".join(bad) if bad else "targets met"))
            ctx.log(lines[-1])
        met = sum(ctx.perf_fractions)
        ctx.perf_messages.append(f"{met:g}/{len(cases)} scenarios meet the targets ({TARGETS})"
                                 + "".join(f"\n  {x}" for x in lines))
    return check


def plot_traces(ctx, cases, yours, paper):
    k = min(2, len(cases) - 1)
    row, n = yours[k], cases[k]["flows"]
    if "trace_t_us" not in row:
        return
    t = [x / 1000 for x in row["trace_t_us"]]
    m = len(t)
    step = max(1, m // 1500)
    ctx.plot("lab16-rates", {f"flow {i}": [(t[j], row["trace_rates"][i * m + j])
                                          for j in range(0, m, step)] for i in range(min(n, 8))},
             xlabel="time (ms)", ylabel="rate (Gb/s)", logx=False,
             title=f"lab16: {n} flows into one {cases[k]['line']} Gb/s port, your settings")
    series = {"your settings": [(t[j], row["trace_q_kb"][j]) for j in range(0, m, step)]}
    if "trace_q_kb" in paper[k]:
        series["the paper's settings"] = [(t[j], paper[k]["trace_q_kb"][j])
                                          for j in range(0, m, step)]
    ctx.plot("lab16-queue", series, xlabel="time (ms)", ylabel="egress queue (KB)", logx=False,
             title=f"lab16: the switch's queue, {n} flows, {cases[k]['line']} Gb/s")


for _name, _port in PORTS.items():
    lab.check(f"sim.incast.{_name}", f"Your settings at {_port['line']} Gb/s: full link, fair, "
              f"queue under {_port['qbound']} KB, no PFC (2 to 32 flows)", points=10,
              backend="sim", kind="decision", timeout=90)(incast_check(_name, _port))


# --- the answers file -------------------------------------------------------------------

def pfc_queue_kb(port, flows):
    """Egress queue (KB) when the first XOFF goes out: equal flows at line rate share the
    queue equally (drained in proportion), so every ingress passes XOFF together."""
    return flows * port["xoff"]


def ai_recovery_ms(port, rai_mbps, timer_us):
    """Additive increase alone: Rt from half the line rate back to the line rate."""
    return port["line"] / 2 * 1000 / rai_mbps * timer_us / 1000


# key, what it is (the handout's question), the grader's value, tolerance
ANSWERS = [
    ("pfc_queue_kb_25g_2flows", "思考 2: egress queue when PFC first pauses, 2 flows at "
     "25 Gb/s that never slow down", lambda: pfc_queue_kb(PORTS["25g"], 2), 1.0),
    ("ai_recovery_ms_100g", "思考 5: additive increase only (40 Mb/s every 55 us), 50 -> "
     "100 Gb/s", lambda: ai_recovery_ms(PORTS["100g"], 40, 55), 0.5),
]


@lab.check("sim.answers", "思考: PFC before ECN, and why the steps scale (answers.txt)",
           points=10, backend="sim", kind="question")
def sim_answers(ctx):
    given = answers.read_answers(ctx)
    results = []
    for key, what, value, tol in ANSWERS:
        want = value()
        results.append(answers.check_answer(given, key, lambda v, w=want, t=tol:
                                            abs(v - w) <= t + 1e-9,
                                            f"{want:.4g} (within {tol:g}; {what})", number=True))
    answers.score_answers(ctx, results)


# --- the real thing: tc RED on a shaped veth bottleneck -----------------------------------

NET_LINE_GBPS = 0.2   # every veth shaped to 200 Mbit/s by netns.sh (tbf)
NET_RTT_US = 200      # what the settings are asked for: a veth round trip with pacing jitter
NET_QBOUND_KB = 100
NET_SENDERS = 3


def red_missing():
    """Why tc cannot make a RED queue with ECN here, or None."""
    probe = ("ip link set lo up && tc qdisc add dev lo root red limit 400000 min 30000 "
             "max 90000 avpkt 1000 burst 55 probability 0.1 bandwidth 100mbit ecn")
    if shutil.which("unshare") is None or shutil.which("tc") is None:
        return "needs unshare and tc (iproute2)"
    try:
        r = subprocess.run(["unshare", "--net", "sh", "-c", probe], capture_output=True,
                           text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot probe tc: {e}"
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["?"])[-1]
        return f"this kernel cannot make a RED queue with ECN (sch_red): tc says '{why}'"
    return None


@lab.check("net.dcqcn", "On a real RED/ECN queue: your senders vs fixed-rate senders "
           "(3 to 1, 200 Mbit/s)", points=20, backend="net",
           needs={"cpus": 4, "commands": ["tc", "unshare"]}, timeout=150)
def net_dcqcn(ctx):
    why = red_missing()
    if why:
        ctx.skip(why)
    port = dict(line=NET_LINE_GBPS, rtt=NET_RTT_US, xoff=1e6, xon=1e5, qbound=NET_QBOUND_KB)
    s = ctx.run_cases("tune", [port])[0]
    expect("your settings for the veth port", s.get("settings"), "valid")
    avpkt = 1024
    kmin, kmax = max(s["kmin_kb"] * 1000, 2 * avpkt), max(s["kmax_kb"] * 1000, 3 * avpkt)
    kmax = max(kmax, kmin + avpkt)
    red = f"{int(kmin)}:{int(kmax)}:{s['pmax']:.4f}"
    ctx.log(f"RED on the bottleneck from your settings: min:max:probability = {red}")
    out = ctx.out("net.json")
    res = ctx.netrun(["net", "--line", NET_LINE_GBPS, "--rtt", NET_RTT_US, "--qbound",
                      NET_QBOUND_KB, "--seconds", "3", "--rounds", "3", "--json", out,
                      "--backend", "cpu"], nodes=NET_SENDERS + 1, rate="200mbit", red=red,
                     check=False)
    data = ctx.load_json("net.json")
    if data.get("status") != "ok":
        raise CheckFailed(f"the net run failed: {data.get('error', '')}", command=res.command)
    fixed = [r for r in data["rows"] if r["senders"] == "fixed"]
    yours = [r for r in data["rows"] if r["senders"] == "yours"]
    ctx.metric("marked_packets", [r["marked"] for r in yours])
    ctx.metric("queue_p99_kb", [r["queue_p99_kb"] for r in yours])
    ctx.metric("jain", [r["jain"] for r in yours])
    if not any(r["marked"] for r in yours):
        raise CheckFailed("no packet was ever marked CE", expected="the RED queue marks "
                          "packets and the receiver sends CNPs", found="no marks")
    bad = [r for r in yours if r["queue_p99_kb"] > NET_QBOUND_KB or r["jain"] < 0.9]
    if len(bad) > len(yours) // 2:
        raise CheckFailed("queue or fairness", expected=f"queue <= {NET_QBOUND_KB} KB and Jain "
                          ">= 0.9 in most rounds", found=", ".join(
                              f"{r['queue_p99_kb']:.0f} KB / {r['jain']:.2f}" for r in bad))
    perf_samples(ctx, student=[r["util"] for r in yours], baseline=[r["util"] for r in fixed],
                 low=0.8, high=0.9, unit="", name="utilisation")
