"""lab06: latency-optimal collectives (recursive doubling, Rabenseifner, binomial trees)
and a size-based selector.

The harness (common/harness/coll_suite.c) verifies every algorithm with fresh inputs on
every call, and after every call checks each rank's trace against the algorithm's message
pattern (labs/lab06/driver.c): a correct AllReduce of the wrong kind fails. The grader
recomputes the cost model itself, accepting ties, and scores the selector by its
consequence: the time of the student's selected AllReduce against the best of the four
algorithms, run interleaved at each size in the same run (select mode), simulated on a
DGX A100 and measured on MPI ranks.
"""

import math
import random
import statistics

from gradelib import CheckFailed, Lab, answers, expect, expect_close, perf_samples
from gradelib.collectives import check_row, verify_collective

lab = Lab("lab06", title="集合通信原语 (二): latency-optimal", program="lab06",
          student_files=["labs/lab06/lab06.c", "labs/lab06/answers.txt"])

ALGOS = ["ring", "recursive_doubling", "rabenseifner", "tree"]
CPU_RANKS = [1, 2, 3, 4, 5, 6, 7, 8]
SIM_RANKS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16]   # 16: two simulated DGX A100 nodes
SIM_SELECT = (8, 6)                            # GPUs: a power of two, and one that folds


# --- the cost model, written again from the handout -----------------------------------

def cost(algo, p, n, alpha, beta, gamma):
    if p <= 1:
        return 0.0
    p2 = 1 << (p.bit_length() - 1)
    l2 = p2.bit_length() - 1
    fold = 0.0 if p == p2 else 2 * alpha + 2 * n * beta + n * gamma
    if algo == 0:
        return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gamma
    if algo == 1:
        return l2 * (alpha + n * beta + n * gamma) + fold
    if algo == 2:
        return 2 * l2 * alpha + 2 * (p2 - 1) / p2 * n * beta + (p2 - 1) / p2 * n * gamma + fold
    return math.ceil(math.log2(p)) * (2 * alpha + 2 * n * beta + n * gamma)


TIE = 1e-9   # costs this close (relative) are a tie: either choice is right


def cheapest(costs):
    """The algorithms whose cost is the minimum, up to rounding."""
    low = min(costs)
    return [i for i, c in enumerate(costs) if c <= low * (1 + TIE) + 1e-300]


# --- cpu: correctness and the message patterns --------------------------------------------

@lab.check("cpu.verify", "Algorithms verified on 1 to 8 MPI ranks", points=0, backend="cpu",
           timeout=150)
def cpu_verify(ctx):
    return {n: ctx.run_lab("verify", ranks=n, backend="cpu", timeout=60) for n in CPU_RANKS}


def _collective(names):
    def check(ctx, results):
        for name in names:
            verify_collective(results, name)
    return check


for _id, _title, _names, _points in (
        ("recursive_doubling", "Recursive doubling AllReduce", ["recursive_doubling"], 15),
        ("rabenseifner", "Rabenseifner halving-doubling AllReduce", ["rabenseifner"], 15),
        ("binomial", "Binomial Broadcast, Reduce and tree AllReduce",
         ["broadcast", "reduce", "tree"], 15)):
    lab.check(f"cpu.{_id}", f"{_title}: exact and in its own message pattern on 1-8 ranks",
              points=_points, backend="cpu", parent="cpu.verify")(_collective(_names))


@lab.check("cpu.model", "Cost model and selection equal the handout's formulas (ties accepted)",
           points=10, backend="cpu")
def cpu_model(ctx):
    rng = random.Random()
    models = [(5e-6, 1 / 200e9, 1 / 600e9), (2e-6, 1 / 10e9, 1 / 20e9),
              (rng.uniform(1e-7, 1e-4), 1 / rng.uniform(1e9, 500e9), 1 / rng.uniform(5e9, 2e12))]
    ranks = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 64, 100]
    sizes = [8 * 4 ** k for k in range(14)] + [rng.randrange(1, 1 << 30) for _ in range(3)]
    cases = [dict(alpha=a, beta=b, gamma=g, p=p, bytes=float(n))
             for a, b, g in models for p in ranks for n in sizes]
    rows = ctx.run_cases("model", cases)
    for case, row in zip(cases, rows):
        a, b, g, p, n = (case[k] for k in ("alpha", "beta", "gamma", "p", "bytes"))
        where = f"on {p} ranks, {int(n)} B (alpha={a:.3g} s, beta={b:.3g} s/B, gamma={g:.3g} s/B)"
        expect(f"status {where}", row["status"], "success")
        want = [cost(i, p, n, a, b, g) for i in range(4)]
        for i, name in enumerate(ALGOS):
            expect_close(f"cost of {name} {where}", row["cost_s"][i], want[i], rel=1e-6,
                         abs=1e-15)
        ok = cheapest(want)
        if row["selected"] not in ok:
            raise CheckFailed(f"selected algorithm {where}", expected=" or ".join(
                f"{i} ({ALGOS[i]})" for i in ok), found=str(row["selected"]))


@lab.check("cpu.selector", "Selected AllReduce exact on 1-8 ranks", points=5, backend="cpu",
           parent="cpu.verify")
def cpu_selector(ctx, results):
    verify_collective(results, "allreduce")


# --- the selector, scored by its consequence ------------------------------------------------

def select_rows(data):
    """The rows of a select run, each checked: every call's data and pattern."""
    rows = data["rows"]
    if not rows:
        raise CheckFailed("the select run produced no row", expected="one row per size",
                          found="none")
    for r in rows:
        check_row(dict(r, name="select", type="float", redop="sum", root=-1))
    return rows


def worst_size(ctx, runs, low, high, label):
    """Scores the worst size over runs ([(ranks, rows)]): at each size the best algorithm is
    the one with the smallest median time; the ratio is the median of the paired ratios
    best / selected over the samples (interleaved in the same run)."""
    worst = None
    for p, rows in runs:
        for r in rows:
            med = {a: statistics.median(r[a + "_us"]) for a in ALGOS}
            best = min(ALGOS, key=lambda a: med[a])
            pairs = [b / s for b, s in zip(r[best + "_us"], r["selected_us"])]
            ratio = statistics.median(pairs)
            ctx.log(f"{p} ranks, {r['size']} B: " + ", ".join(
                f"{a} {med[a]:.2f}" for a in ALGOS) +
                f", selected {statistics.median(r['selected_us']):.2f} us: ratio {ratio:.3f}")
            if worst is None or ratio < worst[0]:
                worst = (ratio, p, r, best)
    _, p, r, best = worst
    return perf_samples(ctx, student=r["selected_us"], baseline=r[best + "_us"],
                        higher_is_better=False, low=low, high=high, unit="us",
                        name=f"{label}: selected vs best ({best}) at the worst size "
                             f"({p} ranks, {r['size']} B)")


def plot(ctx, name, rows, title):
    """Median time of each algorithm and of the selector against the size."""
    label = {a: a for a in ALGOS}
    label["selected"] = "your selector"
    ctx.plot(name, {label[a]: [(r["size"], statistics.median(r[a + "_us"])) for r in rows]
                    for a in ALGOS + ["selected"]},
             xlabel="message size (bytes)", ylabel="time (us)", logy=True, title=title)


# Measured on 2 MPI ranks, where every call of the student's code crosses to the harness:
# one exchange against two steps for small vectors (about 1.25x), the reduction of the whole
# vector against half of it for large ones (about 1.3x). Each sample is the fastest of a few
# calls and the ratio the median of paired samples, so the 10% criterion holds here too; a
# selector that keeps one algorithm for every size lands near 0.8 or below.
CPU_LOW, CPU_HIGH = 0.75, 0.90


@lab.check("cpu.select_perf", "Selector within 10% of the best algorithm at every size, "
           "measured (2 MPI ranks, 16 B to 1 MiB)", points=10, backend="cpu",
           kind="performance", timeout=120, parent="cpu.verify")
def cpu_select_perf(ctx, _):
    data = ctx.run_lab("select", ["-b", "16", "-e", "1M", "-f", "16", "--repeats", "9"],
                       ranks=2, backend="cpu", timeout=100)
    rows = select_rows(data)
    ctx.metric("model", {k: data.get(k) for k in ("alpha_s", "beta_s_per_byte",
                                                 "gamma_s_per_byte")})
    plot(ctx, "lab06-cpu", rows, "lab06 AllReduce algorithms, 2 MPI ranks (medians)")
    worst_size(ctx, [(2, rows)], CPU_LOW, CPU_HIGH, "2 MPI ranks")


# --- sim ------------------------------------------------------------------------------------

@lab.check("sim.verify", "Algorithms verified on a simulated DGX A100 (1-8, 12, 16 ranks)",
           points=0, backend="sim", timeout=90)
def sim_verify(ctx):
    return {n: ctx.run_lab("verify", ranks=n, backend="sim", timeout=40) for n in SIM_RANKS}


@lab.check("sim.correct", "Every algorithm exact and in its own pattern on the simulator",
           points=5, backend="sim", parent="sim.verify")
def sim_correct(ctx, results):
    for name in ALGOS + ["allreduce", "broadcast", "reduce"]:
        verify_collective(results, name)


@lab.check("sim.select", "Selector within 10% of the best algorithm at every size "
           "(simulated DGX A100, 8 and 6 GPUs, 8 B to 64 MiB)", points=20, backend="sim",
           kind="performance", timeout=60, parent="sim.verify")
def sim_select(ctx, _):
    runs = []
    for p in SIM_SELECT:
        data = ctx.run_lab("select", ["-b", "8", "-e", "64M", "-f", "4", "--repeats", "1"],
                           ranks=p, backend="sim", timeout=25)
        rows = select_rows(data)
        plot(ctx, f"lab06-sim-{p}", rows,
             f"lab06 AllReduce algorithms, simulated DGX A100, {p} GPUs")
        runs.append((p, rows))
    # Virtual time is exact: the worst size over both sweeps decides.
    worst_size(ctx, runs, 0.8, 1 / 1.1, "simulated DGX A100")


# --- the handout's question -----------------------------------------------------------------

@lab.check("sim.answers", "思考: ring's slowdown at 8 B and the switch size (simulated, 8 GPUs)",
           points=5, backend="sim", kind="question", parent="sim.verify")
def sim_answers(ctx, _):
    given = answers.read_answers(ctx)
    slowdown = answers.answer_number(given, "ring_slowdown_8B")
    switch_given = answers.answer_number(given, "switch_bytes")
    data = ctx.run_lab("sweep", ["--coll", ",".join(ALGOS), "-b", "8", "-e", "64M", "-f", "4",
                                 "--repeats", "1"], ranks=8, backend="sim", timeout=25)
    times = {}
    for r in data["rows"]:
        check_row(r, 8)
        times.setdefault(r["size"], {})[r["name"]] = r["time"][0]
    sizes = sorted(times)
    best = {n: min(ALGOS, key=lambda a: times[n][a]) for n in sizes}
    first = sizes[0]
    expect_close(f"ring_slowdown_8B (ring's time / the best algorithm's, 8 GPUs, {first} B)",
                 slowdown,
                 times[first]["ring"] / times[first][best[first]], rel=0.05)
    # The first size of the sweep at which the best algorithm is not recursive doubling.
    switch = next((n for n in sizes if best[n] != "recursive_doubling"), 0)
    expect("switch_bytes (the first swept size at which recursive doubling is no longer the "
           "best, 8 GPUs)", switch_given, float(switch))


# --- gpu ------------------------------------------------------------------------------------

@lab.check("gpu.verify", "Algorithms verified on 2 GPUs with NCCL send/recv", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=120)
def gpu_verify(ctx):
    res = {2: ctx.run_lab("verify", ranks=2, backend="gpu", timeout=100)}
    for name in ALGOS + ["allreduce", "broadcast", "reduce"]:
        verify_collective(res, name)
