"""lab15: a validator of lossless RoCE v2 configuration.

The student's parsers are checked field by field on outputs rendered from known states; the
validator runs on the shipped examples, on clusters generated afresh with faults injected
(scored on precision and recall of its findings, and on the consequence of its fixes: the
grader executes them on its model of the cluster, which must come out compliant), and on
configurations the grader holds and never ships (grader/labs/_lab15_hidden, listed in
.release-exclude).
"""

import glob
import json
import os
import random
import sys

from gradelib import CheckFailed, Lab, expect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _lab15_model as model  # noqa: E402  (the grader's own model of a cluster)

lab = Lab("lab15", title="RoCEv2 无损配置：PFC、ECN、DSCP、GID、MTU 与 NCCL 的检查清单",
          program="lab15")

HIDDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lab15_hidden")
GENERATED = 24   # fresh clusters per grading: three healthy, the others every kind of fault
HIDDEN_F1 = 0.90


# --- running the student's program ------------------------------------------------------------

def write(ctx, name, text):
    path = ctx.out(name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def require_success(rows, what):
    for i, r in enumerate(rows):
        if r.get("status") != "success":
            raise CheckFailed(f"{what(i)}: your function failed", expected="success",
                              found=f"{r.get('status')}: {r.get('error', '')}")


def parse_each(ctx, mode, tool, texts):
    """Run the student's parser `mode` on each of a tool's outputs (written to mode-i.txt);
    returns [(what, row)], `what` naming the output in messages."""
    paths = [write(ctx, f"{mode}-{i}.txt", text) for i, text in enumerate(texts)]
    rows = ctx.run_cases(mode, [{"file": path} for path in paths])
    whats = [f"{tool} output {i} ({path})" for i, path in enumerate(paths)]
    require_success(rows, lambda i: whats[i])
    return list(zip(whats, rows))


def findings_of(row):
    out = []
    for line in row.get("findings", "").splitlines():
        parts = line.split("\t")
        if len(parts) == 4:
            out.append({"code": parts[0], "node": parts[1], "target": parts[2], "fix": parts[3]})
        elif line.strip():
            out.append({"code": "?", "node": "?", "target": "?", "fix": line})
    return out


def validate(ctx, states, tag, seed):
    """Run the validator on each state's dump; returns [findings] in order."""
    cases = []
    for i, st in enumerate(states):
        cases.append({"dump": write(ctx, f"{tag}-{i}.txt", model.render(st, seed + i))})
    rows = ctx.run_cases("validate", cases, name=f"validate-{tag}")
    require_success(rows, lambda i: f"{tag} cluster {i} ({ctx.out(f'{tag}-{i}.txt')})")
    return [findings_of(r) for r in rows]


def keyset(found):
    return {(f["code"], f["node"], f["target"]) for f in found}


def tally(states, results, codes=None):
    """Precision, recall, and the (cluster, fault) missed and found that are not faults; only
    the faults of these codes are wanted when codes is given."""
    tp = fp = fn = 0
    misses, extras = [], []
    for i, (st, found) in enumerate(zip(states, results)):
        want = {f for f in model.faults(st) if codes is None or f[0] in codes}
        got = keyset(found)
        tp += len(want & got)
        fp += len(got - want)
        fn += len(want - got)
        misses += [(i, k) for k in sorted(want - got)]
        extras += [(i, k) for k in sorted(got - want)]
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, misses, extras


def show(items, n=6):
    return "; ".join(f"cluster {i}: {c} on {node}" + (f" {t}" if t != "-" else "")
                     for i, (c, node, t) in items[:n]) + (" ..." if len(items) > n else "")


# --- 1-4. the parsers, field by field ----------------------------------------------------------

def qos_states(rng):
    pol = model.POLICY
    nics = []
    for k in range(10):
        n = model.lossless_nic(pol, "mlx5_0", "ens1f0np0", "192.168.1.10", "0c:42:a1:00:00:01")
        n["dscp_order"] = rng.choice(["ascending", "descending"])
        if k % 3 == 1:
            model.inject({"policy": pol, "hosts": [{"name": "h", "nics": [n], "env": {}}],
                          "switches": []}, rng, rng.choice(["pfc", "dscp_map", "buffer"]))
        if k % 5 == 4:
            n["trust"] = "pcp"
        if k % 4 == 2:  # a priority with more DSCPs than one line holds
            for d in rng.sample(range(64), 12):
                if d not in (pol["roce_dscp"], pol["cnp_dscp"]):
                    n["dscp2prio"][d] = 5
        n["buffer_size"] = rng.choice([[130944, 130944, 0, 0, 0, 0, 0, 0],
                                       [87296, 87296, 0, 87296, 0, 0, 0, 0]])
        nics.append(n)
    return nics


@lab.check("cpu.qos", "Parse mlnx_qos: trust, dscp2prio, PFC, buffers", points=10, backend="cpu")
def cpu_qos(ctx):
    rng = random.Random()
    nics = qos_states(rng)
    outputs = parse_each(ctx, "qos", "mlnx_qos", [model.render_mlnx_qos(n, rng) for n in nics])
    for n, (what, r) in zip(nics, outputs):
        expect(f"{what}: trust", r["trust"], n["trust"])
        want = n["dscp2prio"] if n["trust"] == "dscp" else [-1] * 64
        expect(f"{what}: dscp2prio", r["dscp2prio"], want)
        expect(f"{what}: pfc", r["pfc"], n["pfc"])
        expect(f"{what}: prio2buffer", r["prio2buffer"], n["prio2buffer"])
        expect(f"{what}: buffer_size", r["buffer_size"], n["buffer_size"])


@lab.check("cpu.gids", "Parse show_gids: index, GID, IPv4, version, netdev", points=5,
           backend="cpu")
def cpu_gids(ctx):
    rng = random.Random()
    hosts = []
    for k in range(4):
        st = model.new_state(rng, 1, rng.choice([1, 2, 4]), mgmt=k % 2 == 1)
        if k >= 2:
            st["hosts"][0]["nics"][0]["extra_gids"] = ["fd00:1::%x" % rng.randrange(1, 999)]
        hosts.append(st["hosts"][0])
    outputs = parse_each(ctx, "gids", "show_gids", [model.render_show_gids(h) for h in hosts])
    for h, (what, r) in zip(hosts, outputs):
        want = []
        for n in h["nics"]:
            for idx, raw, ip, ver in model.gid_table(n):
                want.append(f"{n['dev']} 1 {idx} {model.sysfs_gid(raw)} {ip or '-'} "
                            f"{ver[1:]} {n['netdev']}")
        expect(f"{what}: rows", r["gids"].splitlines(), want)


@lab.check("cpu.devinfo", "Parse ibv_devinfo -v: port state, active MTU, link layer", points=5,
           backend="cpu")
def cpu_devinfo(ctx):
    nics = []
    for k in range(6):
        n = model.lossless_nic(model.POLICY, f"mlx5_{k}", "ens1f0np0", f"192.168.1.{10 + k}",
                               "0c:42:a1:00:00:%02x" % k)
        n["mtu"] = [9000, 1500, 4200, 2200, 9000, 1500][k]
        if k in (3, 4):
            n["state"], n["phys"] = "DOWN", "DISABLED"
        nics.append(n)
    outputs = parse_each(ctx, "devinfo", "ibv_devinfo", [model.render_devinfo(n) for n in nics])
    for n, (what, r) in zip(nics, outputs):
        want = [f"{n['dev']} 1 {int(n['state'] == 'ACTIVE')} {model.active_mtu(n)} 1"]
        expect(f"{what}: port", r["ports"].splitlines(), want)


@lab.check("cpu.switch", "Parse the switch's show roce: trust, PFC, ECN, TCs", points=5,
           backend="cpu")
def cpu_switch(ctx):
    rng = random.Random()
    sws = []
    for k in range(6):
        st = model.new_state(rng, 1, 1)
        if k:
            model.inject(st, rng, model.CODES_SWITCH[(k - 1) % 4])
        sws.append(st["switches"][0])
    outputs = parse_each(ctx, "switch", "show roce",
                         [model.render_show_roce(w, model.POLICY) for w in sws])
    for w, (what, r) in zip(sws, outputs):
        expect(f"{what}: trust", r["trust"], w["trust"])
        expect(f"{what}: mode", r["mode"], w["mode"])
        expect(f"{what}: congestion-control mode", r["ecn_mode"], w["ecn_mode"])
        expect(f"{what}: ECN min (KB)", r["ecn_min_kb"], w["ecn_min"])
        expect(f"{what}: ECN max (KB)", r["ecn_max_kb"], w["ecn_max"])
        expect(f"{what}: PFC enabled", r["pfc_enabled"], int(w["pfc"] == "enabled"))
        want = [int(w["pfc"] == "enabled" and q in w["pfc_prios"]) for q in range(8)]
        expect(f"{what}: PFC switch-priorities", r["pfc_prio"], want)
        expect(f"{what}: RoCE used TCs", r["tcs"].splitlines(),
               [f"{sp} {tc} {app} {ets}" for sp, tc, app, ets in w["tcs"]])


# --- 5. the validator on the shipped examples ----------------------------------------------------

@lab.check("cpu.examples", "The shipped example clusters: exactly their faults", points=10,
           backend="cpu")
def cpu_examples(ctx):
    folder = os.path.join(ctx.root, "datasets", "lab15", "examples")
    names = sorted(os.path.basename(p)[:-len(".state.json")]
                   for p in glob.glob(os.path.join(folder, "*.state.json")))
    if not names:
        raise CheckFailed("no example clusters", expected=f"{folder}/*.state.json", found="none")
    states = []
    cases = []
    for name in names:
        with open(os.path.join(folder, name + ".state.json"), encoding="utf-8") as f:
            states.append(json.load(f))
        cases.append({"dump": os.path.join(folder, name + ".txt")})
    rows = ctx.run_cases("validate", cases, name="validate-examples")
    require_success(rows, lambda i: f"example {names[i]}")
    for name, st, r in zip(names, states, rows):
        got, want = keyset(findings_of(r)), set(model.faults(st))
        if got != want:
            raise CheckFailed(f"example {name}: findings differ",
                              expected=", ".join(map(str, sorted(want))) or "none",
                              found=", ".join(map(str, sorted(got))) or "none",
                              details=f"missing: {sorted(want - got)}\nextra: {sorted(got - want)}")


# --- 5-6. fresh clusters: every fault found, nothing else, and the fixes' consequence ----------

@lab.check("cpu.generated", "Validate fresh clusters with every kind of fault injected",
           points=0, backend="cpu", timeout=90)
def cpu_generated(ctx):
    seed = int(os.environ.get("COMMLAB_LAB15_SEED") or random.randrange(1 << 30))
    ctx.log(f"clusters from seed {seed} (rerun them with COMMLAB_LAB15_SEED={seed})")
    states = model.generated_set(random.Random(seed), GENERATED)
    results = validate(ctx, states, "generated", seed)
    ctx.metric("faults", sum(len(model.faults(s)) for s in states))
    return states, results


def exact(ctx, data, codes, what):
    """Every fault of these kinds found, and no finding of these kinds that is not one."""
    states, results = data
    keep = [[f for f in found if f["code"] in codes] for found in results]
    precision, recall, misses, extras = tally(states, keep, codes)
    ctx.metric("precision", round(precision, 4))
    ctx.metric("recall", round(recall, 4))
    if misses or extras:
        raise CheckFailed(f"{what}: findings differ from the faults",
                          expected="every fault, nothing else (precision = recall = 1)",
                          found=f"precision {precision:.3f}, recall {recall:.3f}",
                          details=("missed: " + show(misses) + "\n" if misses else "") +
                                  ("not faults: " + show(extras) if extras else "") +
                                  f"\n(dumps: {ctx.out('generated-N.txt')})")


@lab.check("cpu.nic_faults", "Each NIC: PFC, trust, DSCP map, buffer, MTU, ECN, CNP, ToS, link",
           points=15, backend="cpu", parent="cpu.generated")
def cpu_nic_faults(ctx, data):
    exact(ctx, data, set(model.CODES_NIC), "NIC settings")


@lab.check("cpu.env_faults", "The job's NCCL_IB_TC, NCCL_IB_GID_INDEX, NCCL_IB_HCA", points=10,
           backend="cpu", parent="cpu.generated")
def cpu_env_faults(ctx, data):
    exact(ctx, data, set(model.CODES_ENV), "NCCL settings")


@lab.check("cpu.switch_faults", "The switch: trust, PFC priorities, ECN thresholds, CNP class",
           points=10, backend="cpu", parent="cpu.generated")
def cpu_switch_faults(ctx, data):
    exact(ctx, data, set(model.CODES_SWITCH), "switch settings")


@lab.check("cpu.fixes", "Your fixes, executed on each cluster, leave it lossless", points=10,
           backend="cpu", parent="cpu.generated")
def cpu_fixes(ctx, data):
    states, results = data
    for i, (st, found) in enumerate(zip(states, results)):
        after, bad = model.apply_fixes(st, found)
        if bad:
            f, cmd, why = bad[0]
            raise CheckFailed(f"cluster {i}: a fix the grader cannot execute",
                              expected="a command of the forms in README section 6",
                              found=f"{f['code']} on {f['node']}: '{cmd}' ({why})")
        left = model.faults(after)
        if left:
            raise CheckFailed(f"cluster {i}: still not lossless after your fixes",
                              expected="no fault left", found=", ".join(map(str, left)),
                              details=f"dump: {ctx.out(f'generated-{i}.txt')}")


# --- the configurations the grader holds -----------------------------------------------------------

@lab.check("cpu.hidden", f"Held-back clusters: F1 of findings >= {HIDDEN_F1:.2f}", points=20,
           backend="cpu", timeout=90)
def cpu_hidden(ctx):
    paths = sorted(glob.glob(os.path.join(HIDDEN, "*.json")))
    if not paths:
        ctx.skip("the held-back configurations are kept by the course staff (official grading)")
    states = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            states.append(json.load(f))
    results = validate(ctx, states, "hidden", random.randrange(1 << 30))
    precision, recall, misses, extras = tally(states, results)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    ctx.metric("precision", round(precision, 4))
    ctx.metric("recall", round(recall, 4))
    ctx.metric("f1", round(f1, 4))
    if f1 < HIDDEN_F1:
        raise CheckFailed("findings on the held-back clusters", expected=f"F1 >= {HIDDEN_F1:.2f}",
                          found=f"F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f})",
                          details=f"{len(misses)} missed, {len(extras)} not faults")
