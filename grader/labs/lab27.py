"""lab27: a benchmark harness in the manner of nccl-tests, and the record of one change.

The student's lab27_sweep() runs on every rank of the student's program; the collective it
times, the fills and the checks are the lab's operations, performed by the harness. In the
same run the harness measures its own reference (nccl-tests' procedure) and corrupts, after
every call of a row it picks afresh, a few elements of one rank's output: #wrong must say
exactly how many. The student's report is read as the tools that read nccl-tests' output
read it (whitespace-separated columns), and must equal, line for line, nccl-tests' own
printf formats (v2.17.1, src/common.cu) applied to its values.
"""

import random
import re
import statistics

from gradelib import CheckFailed, Lab, expect

lab = Lab("lab27", title="基准测试方法论：nccl-tests 式的测量与一次改动的前后记录", program="lab27")

PROG = {"allreduce": "all_reduce_perf", "allgather": "all_gather_perf"}
TOL = 0.03            # the student's numbers against the harness's reference
SIM_RUNS = [("allreduce", 8, "1K", "64M"), ("allgather", 6, "1K", "64M")]
CPU_RUNS = [("allreduce", 2, "4K", "16M"), ("allgather", 3, "4K", "4M")]


# --- nccl-tests' report (v2.17.1 src/common.cu: TimeTest, BenchTime, run) --------------------

def header_lines(coll, minb, maxb, factor, warmup, iters):
    return [
        f"# Collective test starting: {PROG[coll]}",
        f"# nThread 1 nGpus 1 minBytes {minb} maxBytes {maxb} step: {factor}(factor) "
        f"warmup iters: {warmup} iters: {iters} agg iters: 1 validation: 1 graph: 0",
        "#",
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
        "          " % ("", "", "", "", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s" % (
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
            "time", "algbw", "busbw", "#wrong"),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
            "(GB/s)", ""),
    ]


def time_str(us):
    return "%7.0f" % us if us >= 10000.0 else "%7.1f" % us if us >= 100.0 else "%7.2f" % us


def time_ok(text):
    """The time as nccl-tests prints it (a value at a boundary may round either way)."""
    v = float(text)
    forms = {time_str(v)}
    if 10000.0 <= v < 10000.5:
        forms.add("%7.1f" % v)
    if 100.0 <= v < 100.05:
        forms.add("%7.2f" % v)
    return text in {x.strip() for x in forms}


ROW_FIELDS = ["size", "count", "type", "redop", "root",
              "time", "algbw", "busbw", "wrong", "time_ip", "algbw_ip", "busbw_ip", "wrong_ip"]


def render_row(f):
    """A row of nccl-tests from its fields (strings as parsed)."""
    s = "%12li  %12li  %8s  %6s  %6s" % (int(f["size"]), int(f["count"]), f["type"], f["redop"],
                                          "%6i" % int(f["root"]))
    for sfx in ("", "_ip"):
        s += "  %7s  %6.2f  %6.2f  %5g" % (f["time" + sfx], float(f["algbw" + sfx]),
                                            float(f["busbw" + sfx]), float(f["wrong" + sfx]))
    return s


def parse_report(text, what):
    """(lines, rows): rows as parsers of nccl-tests' output read them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows = []
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != len(ROW_FIELDS):
            raise CheckFailed(f"{what}: line {n} is not a row of nccl-tests' table",
                              expected=f"{len(ROW_FIELDS)} columns (size count type redop root "
                                       "time algbw busbw #wrong, twice)",
                              found=repr(line[:120]))
        f = dict(zip(ROW_FIELDS, parts))
        try:
            for k in ("size", "count", "root"):
                int(f[k])
            for k in ("time", "algbw", "busbw", "wrong", "time_ip", "algbw_ip", "busbw_ip",
                      "wrong_ip"):
                float(f[k])
        except ValueError:
            raise CheckFailed(f"{what}: line {n} has a column that is not a number",
                              expected="numbers", found=repr(line[:120])) from None
        f["line"], f["n"] = line, n
        rows.append(f)
    return lines, rows


# --- the runs ---------------------------------------------------------------------------------

def sweep(ctx, backend, coll, ranks, minb, maxb, factor, iters, repeats, warmup=5):
    args = ["--coll", coll, "-b", minb, "-e", maxb, "-f", str(factor), "--iters", str(iters),
            "--repeats", str(repeats), "--warmup", str(warmup)]
    data = ctx.run_lab("sweep", args, ranks=ranks, backend=backend,
                       name=f"sweep-{backend}-{coll}-{ranks}")
    students = [r for r in data["rows"] if r.get("name") == "student"]
    refs = [r for r in data["rows"] if r.get("name") == "reference"]
    what = f"{coll} on {ranks} {backend} ranks"
    for r in students:
        if r.get("status") != "success":
            raise CheckFailed(f"{what}: your lab27_sweep failed", expected="success",
                              found=f"{r.get('status')}: {r.get('error', '')}")
    for r in refs:
        if r["wrong"] != r["corrupted"] or r["wrong_ip"] != r["corrupted_ip"]:
            raise CheckFailed(f"{what}: the reference's own check disagrees with the harness "
                              "(a problem of the harness, not yours)",
                              expected=f"{r['corrupted']}", found=f"{r['wrong']}")
    return {"what": what, "coll": coll, "ranks": ranks, "refs": refs,
            "tables": [r["table"] for r in students], "factor": factor, "iters": iters,
            "warmup": warmup, "min": data_size(minb), "max": data_size(maxb)}


def data_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def reports(run):
    """[(lines, rows)] of each round, every row matched to the reference's size."""
    out = []
    for k, text in enumerate(run["tables"]):
        what = f"{run['what']}, round {k + 1}"
        if not text:
            raise CheckFailed(f"{what}: rank 0 wrote no report", expected="nccl-tests' table",
                              found="nothing")
        lines, rows = parse_report(text, what)
        if len(rows) != len(run["refs"]):
            raise CheckFailed(f"{what}: rows of the table", expected=f"{len(run['refs'])} sizes "
                              f"({run['refs'][0]['size']} to {run['refs'][-1]['size']} B)",
                              found=f"{len(rows)} rows")
        out.append((what, lines, rows))
    return out


# --- the checks of one run -----------------------------------------------------------------

def check_format(run):
    want_head = header_lines(run["coll"], run["min"], run["max"], run["factor"], run["warmup"],
                             run["iters"])
    redop = "none" if run["coll"] == "allgather" else "sum"
    for what, lines, rows in reports(run):
        head = lines[:len(want_head)]
        for i, (got, want) in enumerate(zip(head + [""] * len(want_head), want_head)):
            if got != want:
                raise CheckFailed(f"{what}: header line {i + 1}", expected=repr(want),
                                  found=repr(got))
        first = len(want_head)
        for j, f in enumerate(rows):
            if f["n"] != first + j + 1:
                raise CheckFailed(f"{what}: the rows follow the header, one line each",
                                  expected=f"row {j + 1} on line {first + j + 1}",
                                  found=f"line {f['n']}")
            expect(f"{what}, row {j + 1}: type, redop, root", (f["type"], f["redop"], f["root"]),
                   ("float", redop, "-1"))
            for sfx in ("", "_ip"):
                if not time_ok(f["line"].split()[5 if not sfx else 9]):
                    raise CheckFailed(f"{what}, row {j + 1}: the time column",
                                      expected="%7.2f below 100 us, %7.1f below 10000, else %7.0f",
                                      found=repr(f["line"]))
            want = render_row(f)
            if f["line"] != want:
                raise CheckFailed(f"{what}, row {j + 1}: not nccl-tests' row format",
                                  expected=repr(want), found=repr(f["line"]),
                                  details="%12li  %12li  %8s  %6s  %6s, then twice "
                                          "'  %7s  %6.2f  %6.2f  %5g'")
        tail = lines[first + len(rows):]
        errors = sum((float(f["wrong"]) != 0) + (float(f["wrong_ip"]) != 0) for f in rows)
        avg = statistics.fmean([float(f[k]) for f in rows for k in ("busbw", "busbw_ip")])
        want_tail = [f"# Out of bounds values : {errors} {'FAILED' if errors else 'OK'}",
                     None, "#", f"# Collective test concluded: {PROG[run['coll']]}"]
        if len(tail) != len(want_tail):
            raise CheckFailed(f"{what}: the lines after the rows", expected="\n".join(
                w or "# Avg bus bandwidth    : <%g> " for w in want_tail), found="\n".join(tail))
        for got, want in zip(tail, want_tail):
            if want is None:
                m = re.fullmatch(r"# Avg bus bandwidth    : (\S+) ", got)
                if not m or abs(float(m.group(1)) - avg) > 1e-3 * max(avg, 1e-3) + 0.01:
                    raise CheckFailed(f"{what}: the average bus bandwidth line",
                                      expected=repr("# Avg bus bandwidth    : %g " % avg),
                                      found=repr(got))
            elif got != want:
                raise CheckFailed(f"{what}: footer", expected=repr(want), found=repr(got))


def close(found, want, abs_tol):
    return abs(found - want) <= max(TOL * abs(want), abs_tol)


def check_sizes(run):
    for what, _, rows in reports(run):
        for f, ref in zip(rows, run["refs"]):
            expect(f"{what}: size and count of the {ref['size']}-byte row",
                   (int(f["size"]), int(f["count"])), (ref["size"], ref["count"]))


def bw_bytes(run, ref):
    return ref["count"] * 4 * (run["ranks"] if run["coll"] == "allgather" else 1)


def factor(run):
    n = run["ranks"]
    return (2 if run["coll"] == "allreduce" else 1) * (n - 1) / n


def check_bandwidths(run):
    """algbw and busbw follow from the row's own time, as nccl-tests' getBw computes them."""
    for what, _, rows in reports(run):
        for f, ref in zip(rows, run["refs"]):
            for sfx, label in (("", "out-of-place"), ("_ip", "in-place")):
                t = float(f["time" + sfx])
                alg = bw_bytes(run, ref) / 1e9 / (t * 1e-6) if t > 0 else 0
                for key, want in (("algbw", alg), ("busbw", alg * factor(run))):
                    if not close(float(f[key + sfx]), want, 0.011):
                        raise CheckFailed(f"{what}, {ref['size']} B {label}: {key} for the "
                                          f"time {t} us", expected=f"{want:.2f}",
                                          found=f[key + sfx])


def check_times(run, min_size=0):
    """Each size's time within 3% of the reference's: the median over rounds of the paired
    ratios (each round measures both, taking turns to go first)."""
    worst = None
    tables = reports(run)
    for i, ref in enumerate(run["refs"]):
        if ref["size"] < min_size:
            continue
        for sfx, label in (("", "out-of-place"), ("_ip", "in-place")):
            mine = [float(rows[i]["time" + sfx]) for _, _, rows in tables]
            theirs = ref["time" + sfx]
            ratio = statistics.median(m / t if t > 0 else float("inf")
                                      for m, t in zip(mine, theirs))
            t = statistics.median(theirs)
            if worst is None or abs(ratio - 1) > abs(worst[0] - 1):
                worst = (ratio, f"{ref['size']} B {label}: yours {statistics.median(mine)} us, "
                                f"the reference's {t:.2f} us (paired ratio {ratio:.3f})")
            # a displayed time is rounded to 0.01 us: a tiny time may differ by that much
            if abs(ratio - 1) > TOL and abs(statistics.median(mine) - t) > 0.02:
                raise CheckFailed(f"{run['what']}, {ref['size']} B {label}: time per call",
                                  expected=f"{t:.2f} us (the harness's reference: paired ratio "
                                           f"within 1 +- {TOL:.2f})",
                                  found=f"{statistics.median(mine)} us (ratio {ratio:.3f})")
    return worst


def check_wrong(run):
    for what, _, rows in reports(run):
        for f, ref in zip(rows, run["refs"]):
            for sfx, label in (("", "out-of-place"), ("_ip", "in-place")):
                want = ref["corrupted" + sfx]
                got = float(f["wrong" + sfx])
                if got != want:
                    raise CheckFailed(f"{what}, {ref['size']} B {label}: #wrong",
                                      expected=f"{want} (the elements the harness corrupted in "
                                               "this row's output, all ranks together)",
                                      found=f["wrong" + sfx])


# --- sim ------------------------------------------------------------------------------------

@lab.check("sim.sweep", "Your benchmark and the reference on simulated DGX A100s", points=0,
           backend="sim", timeout=90)
def sim_sweep(ctx):
    return [sweep(ctx, "sim", coll, n, lo, hi, 4, 5, 1) for coll, n, lo, hi in SIM_RUNS]


@lab.check("sim.format", "The report is nccl-tests' table, line for line", points=15,
           backend="sim", parent="sim.sweep")
def sim_format(ctx, runs):
    for run in runs:
        check_format(run)


@lab.check("sim.numbers", "Sizes, times and bandwidths within 3% of the reference", points=15,
           backend="sim", parent="sim.sweep")
def sim_numbers(ctx, runs):
    for run in runs:
        check_sizes(run)
        check_bandwidths(run)
        worst = check_times(run)
        ctx.log(f"{run['what']}: largest difference {worst[1]}")


@lab.check("sim.wrong", "#wrong counts exactly what the harness corrupted", points=10,
           backend="sim", parent="sim.sweep")
def sim_wrong(ctx, runs):
    for run in runs:
        check_wrong(run)


# --- cpu ------------------------------------------------------------------------------------

@lab.check("cpu.sweep", "Your benchmark and the reference on MPI ranks", points=0,
           backend="cpu", timeout=150)
def cpu_sweep(ctx):
    return [sweep(ctx, "cpu", coll, n, lo, hi, 4, 10, 3) for coll, n, lo, hi in CPU_RUNS]


@lab.check("cpu.format", "The report on MPI ranks: nccl-tests' table, sizes, bandwidths",
           points=10, backend="cpu", parent="cpu.sweep")
def cpu_format(ctx, runs):
    for run in runs:
        check_format(run)
        check_sizes(run)
        check_bandwidths(run)


@lab.check("cpu.wrong", "#wrong on MPI ranks: exactly what the harness corrupted", points=10,
           backend="cpu", parent="cpu.sweep")
def cpu_wrong(ctx, runs):
    for run in runs:
        check_wrong(run)


CPU_FULL, CPU_NONE = 0.20, 0.60   # |paired time ratio - 1| on a shared, loaded CPU


@lab.check("cpu.numbers", "Times agree with the reference (1 MiB and up, paired medians)",
           points=10, backend="cpu", kind="performance", timeout=150, parent="cpu.sweep")
def cpu_numbers(ctx, _):
    """MPI ranks on CPUs share them with everything else: the same collective timed twice
    in a row differs by more than 3%. The score is the median, over sizes, of each size's
    median paired ratio (yours / the reference's, five rounds taking turns to go first):
    full marks within 20%, none beyond 60%. The 3% test of the method is sim.numbers."""
    run = sweep(ctx, "cpu", "allreduce", 2, "1M", "16M", 2, 20, 5)
    check_format(run)
    tables = reports(run)
    per_size = []
    for i, ref in enumerate(run["refs"]):
        for sfx in ("", "_ip"):
            pairs = [float(rows[i]["time" + sfx]) / t
                     for (_, _, rows), t in zip(tables, ref["time" + sfx]) if t > 0]
            per_size.append(statistics.median(pairs))
    ratio = statistics.median(per_size)
    off = abs(ratio - 1)
    frac = max(0.0, min(1.0, (CPU_NONE - off) / (CPU_NONE - CPU_FULL)))
    ctx.metric("ratio", round(ratio, 4))
    ctx.metric("per_size", [round(x, 3) for x in per_size])
    ctx.perf_fractions.append(round(frac, 4))
    ctx.perf_messages.append(f"your time / the reference's: median paired ratio {ratio:.3f} "
                             f"(full marks within {CPU_FULL:.0%}, none beyond {CPU_NONE:.0%})")


# --- the record of one change -----------------------------------------------------------------

def fixed_cases():
    """Pairs whose statistics are easy to check by hand (the handout's example among them)."""
    return [
        ([100, 102, 98, 101, 99], [110, 111, 109, 112, 108]),
        ([50.0, 50.0, 50.0, 50.0], [40.0, 60.0, 45.0, 55.0]),
        ([10, 20, 30, 40, 50, 60], [11, 19, 33, 40, 45, 66]),
        ([7.5], [7.0]),
    ]


def stats_of(before, after):
    ratios = sorted(a / b for b, a in zip(before, after))
    return {"median_before": statistics.median(before), "median_after": statistics.median(after),
            "effect": statistics.median(ratios), "lo": ratios[0], "hi": ratios[-1]}


@lab.check("cpu.compare", "The record: medians, the effect and its spread", points=10,
           backend="cpu")
def cpu_compare(ctx):
    cases = fixed_cases()
    rng = random.Random()
    for _ in range(6):
        n = rng.randint(3, 15)
        base = [rng.uniform(10, 400) for _ in range(n)]
        cases.append((base, [b * rng.uniform(0.8, 1.25) for b in base]))
    rows = ctx.run_cases("compare", [{"before": ",".join(repr(x) for x in b),
                                      "after": ",".join(repr(x) for x in a)} for b, a in cases])
    for i, ((b, a), r) in enumerate(zip(cases, rows)):
        what = f"case {i + 1} ({len(b)} pairs)"
        expect(f"{what}: status", r["status"], "success")
        for key, want in stats_of(b, a).items():
            if abs(r[key] - want) > 1e-9 * max(1.0, abs(want)):
                raise CheckFailed(f"{what}: {key}", expected=f"{want:.6g}", found=f"{r[key]:.6g}",
                                  details=f"before={b}\nafter={a}")


def scenario(rng, truth):
    """11 pairs of busbw samples of a change whose true effect is up (+1), down (-1) or none
    (0), with 1% noise per sample; half the real changes carry one or two outlier pairs
    pointing the other way, and a null change sometimes one outlier. A null change's ratios
    fall as many above 1 as below (give or take one): its samples cannot tell."""
    n, base = 11, rng.uniform(20, 400)
    noise = [max(-0.025, min(0.025, rng.gauss(0, 0.01))) for _ in range(n)]
    if truth == 0:
        mags = sorted(abs(x) + 1e-4 for x in noise)
        signs = [1] * (n // 2 + rng.randint(0, 1)) + [-1] * n
        rng.shuffle(mags)
        ratios = [1 + s * m for s, m in zip(signs[:n], mags)]
        rng.shuffle(ratios)
        if rng.random() < 0.5:
            ratios[rng.randrange(n)] = rng.choice([0.6, 1.5])
    else:
        eff = rng.uniform(1.05, 1.2) if truth > 0 else rng.uniform(0.82, 0.95)
        ratios = [eff * (1 + x) for x in noise]
        if rng.random() < 0.5:
            for k in rng.sample(range(n), rng.randint(1, 2)):
                ratios[k] = 0.6 if truth > 0 else 1.6
    before = [base * (1 + rng.uniform(-0.01, 0.01)) for _ in range(n)]
    after = [b * r for b, r in zip(before, ratios)]
    return before, after


@lab.check("cpu.verdict", "Your verdicts on 30 changes, scored against their true effect",
           points=15, backend="cpu", kind="decision", parent="cpu.compare")
def cpu_verdict(ctx, _):
    rng = random.Random()
    truths = [t for t in (1, 0, -1) for _ in range(10)]
    rng.shuffle(truths)
    cases = [scenario(rng, t) for t in truths]
    rows = ctx.run_cases("compare", [{"before": ",".join(repr(x) for x in b),
                                      "after": ",".join(repr(x) for x in a)} for b, a in cases],
                         name="verdicts")
    right, misses = 0, []
    for i, (t, r) in enumerate(zip(truths, rows)):
        if r.get("status") != "success":
            raise CheckFailed(f"change {i + 1}: lab27_compare failed", expected="success",
                              found=f"{r.get('status')}: {r.get('error', '')}")
        if r["verdict"] == t:
            right += 1
        else:
            misses.append(f"change {i + 1}: true {t:+d}, yours {r['verdict']:+d}")
    acc = right / len(truths)
    frac = max(0.0, min(1.0, (acc - 0.7) / (0.9 - 0.7)))
    ctx.metric("accuracy", round(acc, 4))
    ctx.perf_fractions.append(round(frac, 4))
    ctx.perf_messages.append(f"{right} of {len(truths)} verdicts right (full marks from 90%, "
                             f"none at 70% or less)" + ("; " + "; ".join(misses[:4]) if misses
                                                         else ""))
