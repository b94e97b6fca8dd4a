"""lab21: Megatron-LM's parallel groups: the rank generator, the communicators, a plan.

The student writes Megatron-LM's RankGenerator (the order string, the masked orthogonal
groups), the twelve communicators initialize_model_parallel builds, with cl_comm_split, and
a plan (sizes and order) for a model on a recorded cluster. The expected groups come from
datasets/lab21/ (make_groups.py, an independent reading of Megatron-LM core_v0.15.0's
parallel_state.py); the harness reads every communicator's members itself and also compares
them with its own reading (labs/lab21/harness_megatron.c). The plan's step is simulated on
the student's own communicators and compared with the best of every valid plan, simulated
in the same run (labs/lab21/harness_step.c).
"""

import os
import random

from gradelib import CheckFailed, Lab, expect, perf_samples
from gradelib.answers import check_answer, read_answers, score_answers

lab = Lab("lab21", title="Megatron 并行组划分", program="lab21",
          student_files=["labs/lab21/lab21.c", "labs/lab21/answers.txt"])

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "datasets", "lab21")
CLUSTER = "dgx-h100"
GPUS = [16, 32, 64]           # 2, 4 and 8 DGX H100 nodes
SCENARIOS = 6
MEM_GB = 80.0                 # H100 SXM 80 GB (the harness's table)
HIGH, LOW = 0.95, 0.80        # best / yours: within 5% full marks, 20% off none


def table(name):
    """The lines of datasets/lab21/<name> as dicts of their key=value tokens."""
    out = []
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                out.append(dict(tok.split("=", 1) for tok in line.split()))
    return out


# --- 1-2: the rank generator ----------------------------------------------------------------

@lab.check("cpu.cases", "Your RankGenerator on the dataset's 320 cases", points=0, timeout=60)
def cpu_cases(ctx):
    rows = table("groups.txt")
    keys = ("tp", "cp", "ep", "dp", "pp", "order", "token")
    got = ctx.run_cases("groups", [{k: r[k] for k in keys} for r in rows])
    ctx.metric("cases", len(rows))
    return rows, got


def _case(r):
    return f"sizes tp={r['tp']} cp={r['cp']} ep={r['ep']} dp={r['dp']} pp={r['pp']}, " \
           f"order '{r['order']}', token '{r['token']}'"


@lab.check("cpu.generator", "The order string: kinds, sizes and Megatron-LM's refusals",
           points=10, parent="cpu.cases")
def cpu_generator(ctx, parent):
    rows, got = parent
    for r, g in zip(rows, got):
        want = "invalid" if r["refused"] == "generator" else "success"
        init = g.get("init", g.get("status"))
        if (init == "success") != (want == "success"):
            raise CheckFailed(f"{_case(r)}: lab21_generator_init returned '{init}'",
                              expected=want + (" (Megatron-LM refuses it)" if want == "invalid"
                                               else ""),
                              found=f"{init}: {g.get('error', '')}".strip(": "))


@lab.check("cpu.groups", "get_ranks: every token's groups, ranks in Megatron-LM's order",
           points=20, parent="cpu.cases")
def cpu_groups(ctx, parent):
    rows, got = parent
    tried = 0
    for r, g in zip(rows, got):
        if r["refused"] == "generator":
            continue
        tried += 1
        if r["refused"] == "token":
            if g["status"] == "success":
                raise CheckFailed(f"{_case(r)}: a token with a name the generator does not "
                                  f"have was accepted", expected="invalid",
                                  found=g.get("groups", "")[:80])
            continue
        expect(f"{_case(r)}: status", g["status"], "success")
        if g.get("groups") != r["expect"]:
            raise CheckFailed(f"{_case(r)}: wrong groups", expected=r["expect"][:300],
                              found=g.get("groups", "")[:300])
    ctx.metric("cases_checked", tried)


# --- 3: the communicators ---------------------------------------------------------------------

def configs(world):
    """{config text as the harness prints it: {kind: (expect, none)} or 'invalid'} for world."""
    out = {}
    for r in table("comms.txt"):
        if int(r["world"]) != world:
            continue
        cfg = " ".join(f"{k}={r[k]}" for k in ("tp", "cp", "pp", "ep", "etp", "order"))
        if r["expect"] == "invalid":
            out[cfg] = "invalid"
        else:
            out.setdefault(cfg, {})[r["kind"]] = (r["expect"], r["none"])
    return out


def run_comms(ctx, world, backend):
    want = configs(world)
    data = ctx.run_lab("comms", ["--config", ";".join(want)], ranks=world, backend=backend,
                       name=f"comms-{backend}-{world}.json")
    return world, want, data["rows"]


def groups_set(text):
    return {tuple(g.split(",")) for g in text.split("|")} if text else set()


def verify_comms(ctx, runs):
    checked = 0
    for world, want, rows in runs:
        by = {}
        for row in rows:
            by.setdefault(row["config"], {})[row["kind"]] = row
        for cfg, kinds in want.items():
            got = by.get(cfg)
            if not got:
                raise CheckFailed(f"{world} ranks, {cfg}: no result", expected="rows",
                                  found="none")
            if kinds == "invalid":
                row = got.get("*")
                if not row or row["status"] == "success":
                    raise CheckFailed(f"{world} ranks, {cfg}: Megatron-LM refuses this "
                                      f"configuration, yours built it", expected="invalid",
                                      found="success")
                continue
            if "*" in got:
                row = got["*"]
                raise CheckFailed(f"{world} ranks, {cfg}: lab21_init_parallel failed",
                                  expected="success",
                                  found=f"{row['status']}: {row.get('error', '')}")
            for kind, (expect_text, none) in kinds.items():
                row = got.get(kind)
                if row is None:
                    raise CheckFailed(f"{world} ranks, {cfg}: no {kind} communicator",
                                      expected=kind, found="none")
                if groups_set(row["groups"]) != groups_set(expect_text) or row["none"] != none:
                    raise CheckFailed(f"{world} ranks, {cfg}: your {kind} communicators are "
                                      f"not Megatron-LM's groups (as the harness read their "
                                      f"members)",
                                      expected=f"{expect_text[:200]} (none: {none})",
                                      found=f"{row['groups'][:200]} (none: {row['none']})")
                if row["mismatch"]:
                    raise CheckFailed(f"{world} ranks, {cfg}: {kind}: {row['mismatch']} rank(s) "
                                      f"differ from the harness's own reading",
                                      expected="0", found=str(row["mismatch"]))
                checked += 1
    ctx.metric("communicators_checked", checked)


@lab.check("cpu.comms", "Communicators by cl_comm_split on 2, 4 and 8 MPI ranks", points=10,
           backend="cpu", timeout=120)
def cpu_comms(ctx):
    verify_comms(ctx, [run_comms(ctx, n, "cpu") for n in (2, 4, 8)])


@lab.check("sim.comms", "Communicators on 16 and 64 simulated ranks", points=15,
           backend="sim", timeout=90)
def sim_comms(ctx):
    verify_comms(ctx, [run_comms(ctx, n, "sim") for n in (16, 64)])


@lab.check("gpu.comms", "Communicators by ncclCommSplit on this node's GPUs", points=10,
           backend="gpu", needs={"gpus": 2}, timeout=180)
def gpu_comms(ctx):
    gpus = ctx.resources.get("gpus", 2)
    world = max(n for n in (2, 4, 8) if n <= gpus)
    verify_comms(ctx, [run_comms(ctx, world, "gpu")])


# --- 4: the plan ------------------------------------------------------------------------------

def params(m):
    return 12.0 * m["layers"] * m["hidden"] ** 2 + m["vocab"] * m["hidden"]


def layouts(m, n):
    """(tp, cp, pp) of every plan the handout's rules allow for model m on n GPUs."""
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    for tp in divisors:
        for cp in divisors:
            for pp in divisors:
                if n % (tp * cp * pp) or m["heads"] % tp or m["layers"] % pp:
                    continue
                if cp > 1 and m["seq"] % (2 * cp):
                    continue
                if m["batch"] % (n // (tp * cp * pp) * m["micro"]):
                    continue
                yield tp, cp, pp


def fits_as(m, tp, cp, pp):
    """Whether the plan's parameters, gradients, optimizer states and activations fit a GPU."""
    mem = 16 * params(m) / (tp * pp) + \
        34 * m["seq"] * m["micro"] * m["hidden"] * m["layers"] / (tp * cp)
    return mem <= MEM_GB * 1e9


def fits(m, n):
    """Some plan of the handout's rules fits in memory (the harness searches them all)."""
    return any(fits_as(m, *plan) for plan in layouts(m, n))


def random_scenario(rng):
    while True:
        h = rng.choice([2048, 3072, 4096, 5120, 6144, 8192])
        m = dict(layers=rng.choice([24, 32, 40, 48, 64, 80]), hidden=h, heads=h // 128,
                 seq=rng.choice([2048, 4096, 8192, 16384, 32768]),
                 vocab=rng.choice([32000, 51200, 128000]),
                 batch=rng.choice([32, 64, 128, 256, 512]), micro=rng.choice([1, 1, 2]))
        n = rng.choice(GPUS)
        if fits(m, n):
            return n, m


def memory_bound_scenario(rng):
    """A fresh scenario where memory binds: at most a fifth of the plans fit, and none inside
    one node's NVLink without pipeline stages (pp = 1, tp * cp <= 8), so a planner that ignores
    memory picks one that does not fit."""
    while True:
        n, m = random_scenario(rng)
        plans = list(layouts(m, n))
        fitting = [(tp, cp, pp) for tp, cp, pp in plans if fits_as(m, tp, cp, pp)]
        if len(fitting) <= len(plans) / 5 and not any(pp == 1 and tp * cp <= 8
                                                      for tp, cp, pp in fitting):
            return n, m


@lab.check("sim.plan", "Your plans' simulated steps within 5% of the best plans (DGX H100)",
           points=30, backend="sim", kind="performance", timeout=120)
def sim_plan(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random models from seed {seed}")
    rng = random.Random(seed)
    scenarios = [random_scenario(rng) for _ in range(SCENARIOS)]
    scenarios.insert(rng.randint(0, SCENARIOS), memory_bound_scenario(rng))
    mine, best = [], []
    for i, (n, m) in enumerate(scenarios):
        args = ["--system", CLUSTER] + [x for k, v in m.items() for x in (f"--{k}", str(v))]
        data = ctx.run_lab("plan", args, ranks=n, backend="sim", name=f"plan-{i}.json")
        row = data["rows"][0]
        what = f"scenario {i} ({n} GPUs, {m})"
        ctx.log(f"{what}: yours {row['plan']} {row['step_s']:.4g} s, best {row['best_plan']} "
                f"{row['best_step_s']:.4g} s")
        if row["status"] != "valid":
            ctx.log(f"  your plan is not valid: {row.get('why', '')}")
            mine.append(float("inf"))
        else:
            mine.append(row["step_s"])
        best.append(row["best_step_s"])
    ctx.plot("lab21-plans", {"your plan": [(i + 1, b / s if s != float("inf") else 0)
                                           for i, (s, b) in enumerate(zip(mine, best))],
                             "the best plan": [(i + 1, 1.0) for i in range(len(best))]},
             xlabel="scenario", ylabel="best step / your step", logx=False,
             title="lab21: your plans on simulated DGX H100 clusters")
    for i, (s, b) in enumerate(zip(mine, best)):
        if s == float("inf"):   # an invalid plan scores nothing
            ctx.perf_fractions.append(0.0)
            ctx.perf_messages.append(f"scenario {i}: your plan is not valid")
            continue
        perf_samples(ctx, student=[s], baseline=[b], higher_is_better=False, low=LOW,
                     high=HIGH, unit="s", name=f"scenario {i} step")


# --- answers ----------------------------------------------------------------------------------

DEFAULT_MODEL = dict(layers=40, hidden=5120, vocab=51200)   # the plan mode's defaults


@lab.check("sim.answers", "Answers: where the DP groups lie, and what they reduce", points=5,
           backend="sim", kind="question", parent="sim.comms")
def sim_answers(ctx, _):
    ans = read_answers(ctx)
    grad_gb = 4 * params(DEFAULT_MODEL) / (2 * 4) / 1e9
    score_answers(ctx, [
        check_answer(ans, "dp_inside_node_order", lambda v: v.strip().lower() == "tp-dp-pp",
                     "the order among tp-dp-pp and tp-pp-dp that keeps DP inside a node"),
        check_answer(ans, "dp_gradient_GB", lambda v: abs(v - grad_gb) <= 0.02 * grad_gb,
                     f"{grad_gb:.2f} GB (within 2%)", number=True)])
