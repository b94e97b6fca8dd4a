"""lab02: NVLink/PCIe topology discovery.

The harness reads every file and gives its text to the student's parser (the
student's program opens no file and holds none of the library's parsers). The
parse must reproduce, cell for cell, the hand-checked JSON of every recorded
matrix (tests/topo/expected) and reject malformed files naming the right line.
The analysis (NVLink domains, SYS pairs, TP groups) is checked against a second
implementation here, on the recorded matrices and on relabelled copies made
fresh for each run; the NIC choice is scored by its consequence, the share of a
NIC the slowest GPU gets. On a GPU machine the CUDA runtime, queried by the
harness, is compared with the student's parse of `nvidia-smi topo -m`.
"""

import glob
import itertools
import json
import os
import random
import urllib.parse

from gradelib import CheckFailed, Lab, expect, ramp

lab = Lab("lab02", title="NVLink/PCIe 拓扑探测", program="lab02")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(ROOT, "tests", "topo", "expected")
DATASETS = sorted(glob.glob(os.path.join(ROOT, "datasets", "topologies", "*.topo.txt")))
REAL = sorted(glob.glob(os.path.join(ROOT, "tests", "topo", "real", "*.topo.txt")))

VALID_CODES = {"X": ("X", 0), "NV1": ("NV", 1), "NV2": ("NV", 2), "NV4": ("NV", 4),
               "NV12": ("NV", 12), "NV18": ("NV", 18), "PIX": ("PIX", 0), "PXB": ("PXB", 0),
               "PHB": ("PHB", 0), "NODE": ("NODE", 0), "SYS": ("SYS", 0)}
INVALID_CODES = ["FOO", "NV", "NV0", "nv4", "SYSX", "PIXX", "N/A", "-", "NV1X", "X1"]

SPLITS = [  # text, want, expected codes (None: must be rejected), expected rest
    ("\tNV1\tSYS  PIX\t0-3\t1", 3, ["NV1", "SYS", "PIX"], "\t0-3\t1"),
    (" X   NV12NV12 SYSSYS PXB", 6, ["X", "NV12", "NV12", "SYS", "SYS", "PXB"], ""),
    ("PHB NODE PIX  X", 2, ["PHB", "NODE"], " PIX  X"),
    ("SYSPIX X\t24-31", 3, ["SYS", "PIX", "X"], "\t24-31"),
    ("NODE NODE", 4, ["NODE", "NODE"], ""),
    ("SYS FOO SYS", 3, None, None),
    ("PIXSYSS", 3, None, None),
]

# Malformed files and the lines a good parser may blame: the line that shows the fault,
# and for a matrix that is not square or an unknown column, the header too.
MALFORMED = {
    "short-row.topo.txt": {3}, "unknown-code.topo.txt": {2}, "row-name-mismatch.topo.txt": {4},
    "not-square.topo.txt": {1, 2}, "extra-cell.topo.txt": {2}, "x-off-diagonal.topo.txt": {2},
    "bad-numa.topo.txt": {2}, "duplicate-row.topo.txt": {3}, "empty.topo.txt": {1, 2},
    "unknown-column.topo.txt": {1, 2}, "nic-legend-unknown.topo.txt": {12},
}

# --- what the topology says, written again here from the handout ----------------------

NEAR = {"NV": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}


def kind(code):
    return "NV" if code.startswith("NV") else code


def gpus_of(topo):
    return [i for i, d in enumerate(topo["devices"]) if d.startswith("GPU")]


def nics_of(topo):
    return [i for i, d in enumerate(topo["devices"]) if not d.startswith("GPU")]


def nvlinked(topo, i, j):
    return kind(topo["links"][i][j]) == "NV" and kind(topo["links"][j][i]) == "NV"


def domains(topo):
    """{gpu: domain}: the lowest GPU not yet placed takes the largest set of unplaced GPUs,
    pairwise NVLink-joined, that holds it (the lexicographically first of the largest)."""
    placed = {}
    for g in gpus_of(topo):
        if g in placed:
            continue
        cand = [h for h in gpus_of(topo) if h > g and h not in placed and nvlinked(topo, g, h)]
        best = [g]
        for size in range(len(cand), 0, -1):
            if size + 1 <= len(best):
                break
            for combo in itertools.combinations(cand, size):
                if all(nvlinked(topo, a, b) for a, b in itertools.combinations(combo, 2)):
                    best = [g, *combo]
                    break
        d = len(set(placed.values()))
        for h in best:
            placed[h] = d
    return placed


def sys_pairs(topo):
    gs = gpus_of(topo)
    return sum(1 for a, b in itertools.combinations(gs, 2) if topo["links"][a][b] == "SYS")


def nearest(topo, g):
    nics = nics_of(topo)
    if not nics:
        return []
    best = min(NEAR.get(kind(topo["links"][g][n]), 9) for n in nics)
    return [n for n in nics if NEAR.get(kind(topo["links"][g][n]), 9) == best]


def fewest_sharing(topo):
    """The smallest possible number of GPUs on the busiest NIC, each GPU on a nearest NIC
    (a bipartite assignment with capacities, by augmenting paths)."""
    gs = gpus_of(topo)
    near = {g: nearest(topo, g) for g in gs}
    for cap in range(1, len(gs) + 1):
        owner = {}   # (nic, slot) -> gpu

        def place(g, seen):
            for n in near[g]:
                for slot in range(cap):
                    if (n, slot) in seen:
                        continue
                    seen.add((n, slot))
                    if (n, slot) not in owner or place(owner[(n, slot)], seen):
                        owner[(n, slot)] = g
                        return True
            return False

        if all(place(g, set()) for g in gs):
            return cap
    return len(gs)


# --- topologies: the recorded ones and relabelled copies --------------------------------

def expected(path):
    with open(os.path.join(EXPECTED, os.path.basename(path) + ".json"), encoding="utf-8") as f:
        return json.load(f)


def relabel(topo, rng):
    """The same machine with its GPUs and its NICs numbered in another order (another BIOS,
    another driver): a topology dict and its `nvidia-smi topo -m` text."""
    gs, ns = gpus_of(topo), nics_of(topo)
    order = rng.sample(gs, len(gs)) + rng.sample(ns, len(ns))
    names = [f"GPU{k}" for k in range(len(gs))] + [f"NIC{k}" for k in range(len(ns))]
    links = [[topo["links"][a][b] for b in order] for a in order]
    text = "\t" + "\t".join(names) + "\n"
    for name, row in zip(names, links):
        text += name + "\t" + "\t".join(" X " if c == "X" else c for c in row) + "\n"
    return {"devices": names, "links": links}, text


def variant(topo, rng):
    """A fresh `nvidia-smi topo -m` text of the same machine: devices renumbered, NICs
    renamed through a NIC legend, tabs or spaces, affinity columns when the recording has
    them. Returns (text, the topology the parser must find, line of each device's row)."""
    gs, ns = gpus_of(topo), nics_of(topo)
    order = rng.sample(gs, len(gs)) + rng.sample(ns, len(ns))
    labels = [f"GPU{k}" for k in range(len(gs))] + [f"NIC{k}" for k in range(len(ns))]
    ports = rng.sample(range(20), len(ns))
    names = labels[:len(gs)] + [f"mlx5_{p}" for p in ports]
    old = topo["devices"]
    cpu = [topo["cpu_affinity"].get(old[i], "") for i in order[:len(gs)]]
    with_cpu = all(cpu)
    with_numa = with_cpu and all(old[i] in topo["numa_affinity"] for i in order[:len(gs)])
    sep = (lambda: "\t") if rng.random() < 0.5 else (lambda: " " * rng.randint(2, 5))
    cols = (["CPU Affinity"] if with_cpu else []) + (["NUMA Affinity", "GPU NUMA ID"]
                                                     if with_numa else [])
    lines = [] if rng.random() < 0.5 else ["$ nvidia-smi topo -m"]
    lines.append(sep() + sep().join(labels + cols))
    rows = {}
    want = {"devices": names, "links": [], "cpu_affinity": {}, "numa_affinity": {}}
    for k, i in enumerate(order):
        cells = [topo["links"][i][j] for j in order]
        want["links"].append(cells)
        text = labels[k] + sep() + sep().join(" X " if c == "X" else c for c in cells)
        if k < len(gs) and with_cpu:
            text += sep() + cpu[k]
            want["cpu_affinity"][names[k]] = cpu[k]
        if k < len(gs) and with_numa:
            numa = topo["numa_affinity"][old[i]]
            text += sep() + ("N/A" if numa is None else str(numa)) + sep() + "N/A"
            want["numa_affinity"][names[k]] = numa
        rows[k] = len(lines) + 1
        lines.append(text)
    if ns:
        lines += ["", "NIC Legend:", ""] + [f"  {labels[len(gs) + k]}: {names[len(gs) + k]}"
                                            for k in range(len(ns))]
    return "\n".join(lines) + "\n", want, rows


def corrupt(text, rows, rng):
    """The text with one row broken; returns (text, the line a parser must blame, what)."""
    lines = text.split("\n")
    k = rng.choice(sorted(rows))
    line = rows[k]
    words = lines[line - 1].split()
    how = rng.choice(["short", "code", "label", "self"])
    if how == "short":
        cells = [w for w in words[1:] if w in CODES or w.startswith("NV")]
        words = [words[0]] + cells[:-1]
    elif how == "code":
        j = rng.choice([n for n in range(1, len(rows) + 1) if n != k + 1])
        words[j] = rng.choice(["FOO", "NV0", "S YS", "PHX"])
    elif how == "label":
        words[0] = "GPU99"
    else:
        words[k + 1] = "SYS"
    lines[line - 1] = "\t".join(words)
    return "\n".join(lines), line, how


def fresh_files(ctx, seed, malformed):
    """Fresh variants of the recorded matrices for this run, written to the check's folder:
    [(path, expected topology or the line a parser must blame)]."""
    rng = random.Random(seed)
    out = []
    for k, path in enumerate(rng.sample(DATASETS + REAL, 5)):
        text, want, rows = variant(expected(path), rng)
        if malformed:
            text, want, _ = corrupt(text, rows, rng)
        name = ctx.out(f"fresh-{k}-" + os.path.basename(path))
        with open(name, "w", encoding="utf-8") as f:
            f.write(text)
        out.append((name, want))
    return out


def has_nic_choice(topo):
    return any(len(nearest(topo, g)) > 1 for g in gpus_of(topo))


def analysis_inputs(ctx, seed):
    """(path, topology) of every recorded matrix, and relabelled copies written for this run:
    one of each machine with something to find, three of those with a NIC to choose."""
    rng = random.Random(seed)
    found = [(p, expected(p)) for p in DATASETS + REAL]
    for k, (path, topo) in enumerate(list(found)):
        copies = 3 if has_nic_choice(topo) else 1 if len(gpus_of(topo)) > 1 and (
            nics_of(topo) or sys_pairs(topo) or len(set(domains(topo).values())) > 1) else 0
        for c in range(copies):
            copy, text = relabel(topo, rng)
            out = ctx.out(f"relabelled-{k}-{c}-" + os.path.basename(path))
            with open(out, "w", encoding="utf-8") as f:
                f.write(text)
            found.append((out, copy))
    return found


def rel(path):
    return os.path.relpath(path, ROOT)


def groups_for(topo, rng):
    """TP groups to ask about: every GPU, each domain, one across domains, random ones."""
    gs = gpus_of(topo)
    dom = domains(topo)
    out = [gs]
    by = {}
    for g in gs:
        by.setdefault(dom[g], []).append(g)
    out += [v for v in by.values() if len(v) > 1][:2]
    if len(by) > 1:
        out.append([by[0][0], by[1][0]])
    for _ in range(2):
        out.append(sorted(rng.sample(gs, rng.randint(1, len(gs)))))
    return out


# --- checks: codes, rows, the parser -----------------------------------------------------

@lab.check("cpu.codes", "Legend codes", points=10, timeout=20)
def cpu_codes(ctx):
    codes = list(VALID_CODES) + INVALID_CODES
    rows = ctx.run_cases("codes", [{"code": c} for c in codes])
    for code, row in zip(codes, rows):
        if code in VALID_CODES:
            want_kind, links = VALID_CODES[code]
            expect(f"status of {code!r}", row["status"], "success")
            expect(f"kind of {code!r}", row["kind"], want_kind)
            expect(f"NVLink count of {code!r}", row["nvlinks"], links)
            expect(f"stored code of {code!r}", row["stored"], code)
        else:
            expect(f"status of {code!r} (not a legend code)", row["status"], "malformed input")


CODES = ["X", "NV1", "NV2", "NV4", "NV12", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"]


def random_splits(rng, n):
    """Rows made for this run: random codes, separated by tabs, spaces or nothing at all."""
    out = []
    for _ in range(n):
        codes = [rng.choice(CODES) for _ in range(rng.randint(2, 12))]
        text = rng.choice(["", " ", "\t", "   "])
        for k, code in enumerate(codes):
            text += code + (rng.choice(["\t", " ", "  ", "    ", ""]) if k + 1 < len(codes) else "")
        want = rng.randint(1, len(codes))
        rest_text = rng.choice(["", "\t0-7,16-23\t0", "     24-31,88-95     3     N/A"])
        text += rest_text
        # the codes after the first `want` stay in the rest, as they are in the text
        end, pos = 0, 0
        for code in codes[:want]:
            pos = text.index(code, pos) + len(code)
            end = pos
        out.append((text, want, codes[:want], text[end:]))
    return out


@lab.check("cpu.split", "Splitting a row into cells", points=10, timeout=20)
def cpu_split(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"random rows from seed {seed}")
    splits = SPLITS + random_splits(random.Random(seed), 8)
    cases = [{"text": urllib.parse.quote(t, safe=""), "want": w} for t, w, _, _ in splits]
    rows = ctx.run_cases("split", cases)
    for (text, want, codes, rest), got in zip(splits, rows):
        expect(f"status for {text!r}", got["status"], "success")
        if codes is None:
            expect(f"result for {text!r} (has a non-code)", got["count"], -1)
            continue
        expect(f"count for {text!r}", got["count"], len(codes))
        expect(f"codes of {text!r}", got["codes"].split(), codes)
        expect(f"rest after {want} codes of {text!r} (offset)", got["rest"], len(text) - len(rest))


def first_difference(want, got, path="topology"):
    """A description of the first place where got differs from want, or None."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if key not in got:
                return f"{path}: missing {key!r}"
            if key not in want:
                return f"{path}: unexpected {key!r}"
            diff = first_difference(want[key], got[key], f"{path}[{key!r}]")
            if diff:
                return diff
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return f"{path}: {len(got)} entries, expected {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            diff = first_difference(w, g, f"{path}[{i}]")
            if diff:
                return diff
        return None
    return None if want == got else f"{path}: expected {want!r}, found {got!r}"


def by_case(rows):
    """[(case row, [the rows it added after it]), ...]: a case's own row comes first."""
    out = []
    for row in rows:
        if "case" in row:
            out.append((row, []))
        elif out:
            out[-1][1].append(row)
    return out


def parse_files(ctx, paths, name):
    """Runs the student's parser on every path (one process); returns {rel path: (case row,
    device rows)}."""
    listing = ctx.out(name + ".cases")
    with open(listing, "w", encoding="utf-8") as f:
        for p in paths:
            f.write(f"file={rel(p)}\n")
    data = ctx.run_lab("parse", ["--cases", listing], name=name + ".json")
    found = {case["file"]: (case, devs) for case, devs in by_case(data["rows"])}
    missing = [rel(p) for p in paths if rel(p) not in found]
    if missing:
        raise CheckFailed("the parser run stopped early", expected="a result for every file",
                          found="none for " + ", ".join(missing))
    return found


def as_topology(devs):
    """The JSON of `commlab topo --json` rebuilt from the device rows."""
    names = [d["device"] for d in devs]
    return {"devices": names, "links": [d["links"].split() for d in devs],
            "cpu_affinity": {d["device"]: d["cpu_affinity"] for d in devs if d["cpu_affinity"]},
            "numa_affinity": {d["device"]: (None if d["numa"] == "N/A" else int(d["numa"]))
                              for d in devs if d["numa"]}}


def check_parsed(path, case, devs):
    check_against(path, expected(path), case, devs)


def register_dataset_checks():
    for path in DATASETS:
        stem = os.path.basename(path)[: -len(".topo.txt")]

        def run(ctx, path=path):
            found = parse_files(ctx, [path], "parse")
            case, devs = found[rel(path)]
            check_parsed(path, case, devs)

        lab.check(f"cpu.parse.{stem}", f"Recorded matrix: {stem}", points=6, timeout=20)(run)


register_dataset_checks()


def check_against(path, want, case, devs):
    name = os.path.basename(path)
    expect(f"{name}: status", case["status"], "success")
    diff = first_difference(want, as_topology(devs))
    if diff:
        raise CheckFailed(f"{name} parsed differently from the machine it shows",
                          expected=f"the matrix as written in {rel(path)}", found=diff)
    for d in devs:
        if d["bad_cells"]:
            raise CheckFailed(f"{name}: row {d['device']}: a cell's kind or NVLink count does "
                              "not follow from its code", expected="kind and nvlinks as in "
                              "section 1", found=f"{d['bad_cells']} such cells")
        want_kind = "gpu" if d["label"].startswith("GPU") else "nic"
        expect(f"{name}: kind of {d['device']}", d["kind"], want_kind)


@lab.check("cpu.real", "More real matrices, and fresh variants of the recorded ones",
           points=10, timeout=30)
def cpu_real(ctx):
    if not REAL:
        raise CheckFailed("no real matrices found", expected="tests/topo/real/*.topo.txt",
                          found="none")
    seed = random.randrange(1 << 30)
    ctx.log(f"fresh variants from seed {seed}")
    fresh = fresh_files(ctx, seed, malformed=False)
    found = parse_files(ctx, REAL + [p for p, _ in fresh], "parse")
    for path in REAL:
        check_parsed(path, *found[rel(path)])
    for path, want in fresh:
        check_against(path, want, *found[rel(path)])
    ctx.metric("files", len(REAL) + len(fresh))


def check_blame(path, case, lines):
    name, r = os.path.basename(path), rel(path)
    expect(f"status for {name}", case["status"], "malformed input")
    why = case.get("error", "")
    prefix = r + ":"
    line = why[len(prefix):].split(":", 1)[0] if why.startswith(prefix) else ""
    if not line.isdigit() or not why[len(prefix) + len(line):].startswith(": ") or \
            len(why) <= len(prefix) + len(line) + 2:
        raise CheckFailed(f"{name}: the error does not say where",
                          expected=f"a message '{r}:LINE: reason'", found=why or "(none)")
    if int(line) not in lines:
        raise CheckFailed(f"{name}: the error names the wrong line",
                          expected="line " + " or ".join(map(str, sorted(lines))), found=why)


@lab.check("cpu.malformed", "Malformed files: clear error with the line number", points=15,
           timeout=30)
def cpu_malformed(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"fresh broken variants from seed {seed}")
    fresh = fresh_files(ctx, seed, malformed=True)
    paths = [os.path.join(ROOT, "tests", "topo", "bad", n) for n in sorted(MALFORMED)]
    found = parse_files(ctx, paths + [p for p, _ in fresh], "parse")
    for path in paths:
        check_blame(path, found[rel(path)][0], MALFORMED[os.path.basename(path)])
    for path, line in fresh:
        check_blame(path, found[rel(path)][0], {line})


# --- checks: the analysis -----------------------------------------------------------------

@lab.check("cpu.analyse", "Your analysis of every matrix runs", points=0, timeout=40)
def cpu_analyse(ctx):
    seed = random.randrange(1 << 30)
    ctx.log(f"relabelled copies and groups from seed {seed}")
    rng = random.Random(seed)
    inputs = analysis_inputs(ctx, seed)
    cases = []
    for path, topo in inputs:
        for group in groups_for(topo, rng):
            cases.append((path, topo, group))
    listing = ctx.out("analyse.cases")
    with open(listing, "w", encoding="utf-8") as f:
        for path, _, group in cases:
            f.write(f"file={rel(path)} group={','.join(map(str, group))}\n")
    data = ctx.run_lab("analyse", ["--cases", listing])
    done = by_case(data["rows"])
    if len(done) != len(cases):
        raise CheckFailed("the analysis run stopped early", expected=f"{len(cases)} cases",
                          found=f"{len(done)}")
    results = []
    for (path, topo, group), (head, rows) in zip(cases, done):
        expect(f"{named(path)}: status", head["status"], "success")
        results.append((path, topo, group, head, {r["gpu"]: r for r in rows}))
    return results


def named(path):
    base = os.path.basename(path)
    return base if not base.startswith("relabelled-") else base + " (relabelled copy)"


@lab.check("cpu.domains", "NVLink domains of every matrix", points=10, parent="cpu.analyse")
def cpu_domains(ctx, analysed):
    for path, topo, _, head, rows in analysed:
        want = domains(topo)
        expect(f"{named(path)}: number of NVLink domains", head["domains"],
               len(set(want.values())))
        for g in gpus_of(topo):
            got = rows.get(g, {}).get("domain")
            expect(f"{named(path)}: domain of {topo['devices'][g]}", got, want[g])


@lab.check("cpu.questions", "SYS pairs and TP groups across domains", points=10,
           parent="cpu.analyse")
def cpu_questions(ctx, analysed):
    for path, topo, group, head, _ in analysed:
        expect(f"{named(path)}: GPU pairs across SYS", head["sys_pairs"], sys_pairs(topo))
        dom = domains(topo)
        names = ",".join(topo["devices"][g] for g in group)
        expect(f"{named(path)}: NVLink domains spanned by the group {names}",
               head["group_domains"], len({dom[g] for g in group}))


@lab.check("cpu.nics", "Your NIC for each GPU: the share of a NIC the slowest GPU gets",
           points=15, kind="decision", parent="cpu.analyse")
def cpu_nics(ctx, analysed):
    done = set()
    for path, topo, _, head, rows in analysed:
        if path in done or not nics_of(topo) or not gpus_of(topo):
            continue
        done.add(path)
        expect(f"{named(path)}: status of your NIC choice", head["nic_status"], "success")
        load = {}
        for g in gpus_of(topo):
            nic = rows.get(g, {}).get("nic", -2)
            if nic not in nearest(topo, g):
                raise CheckFailed(f"{named(path)}: {topo['devices'][g]} uses a NIC that is not "
                                  "one of its nearest", expected="one of " + ", ".join(
                                      topo["devices"][n] for n in nearest(topo, g)),
                                  found=topo["devices"][nic] if nic >= 0 else "none")
            load[nic] = load.get(nic, 0) + 1
        if not has_nic_choice(topo):
            continue  # every GPU has one nearest NIC: nothing to decide
        yours, best = max(load.values()), fewest_sharing(topo)
        # Every GPU sends at once (the inter-node phase of an AllReduce): a NIC shared by k
        # GPUs gives each 1/k of its bandwidth, and the job goes at the slowest GPU's pace.
        ctx.log(f"{named(path)}: busiest NIC serves {yours} GPUs (fewest possible {best}): "
                f"slowest GPU gets {1 / yours:.2f} of a NIC, best {1 / best:.2f}")
        ctx.perf_fractions.append(round(ramp(best / yours, 0.5, 0.999), 4))
    frac = sum(ctx.perf_fractions) / max(1, len(ctx.perf_fractions))
    ctx.metric("fraction", frac)
    ctx.perf_messages.append(f"NIC choice: mean score {frac:.3f} over "
                             f"{len(ctx.perf_fractions)} machines with a choice "
                             "(full marks when the busiest NIC serves as few GPUs as possible)")


# --- the GPU probe ------------------------------------------------------------------------

@lab.check("gpu.probe", "CUDA runtime agrees with your parse of nvidia-smi topo -m", points=10,
           backend="gpu", needs={"gpus": 1}, timeout=60)
def gpu_probe(ctx):
    smi = ctx.run(["nvidia-smi", "topo", "-m"])
    path = ctx.out("smi.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(smi.stdout)
    data = ctx.run_lab("probe", [f"smi={rel(path)}"])
    head = next(r for r in data["rows"] if "case" in r)
    if head["status"] == "not supported here":
        ctx.skip(head.get("error") or "no usable GPU")
    expect("status", head["status"], "success")
    expect("GPUs CUDA sees vs GPUs in your parse", head["gpus_parsed"], head["gpus_cuda"])
    for r in data["rows"]:
        if "busid" in r and r["numa_parsed"] >= 0 and r["numa_sysfs"] >= 0:
            expect(f"NUMA node of GPU{r['gpu']} ({r['busid']}): your parse vs sysfs",
                   r["numa_parsed"], r["numa_sysfs"])
        if "code" in r:
            pair = f"GPU{r['a']}-GPU{r['b']} ({r['code']})"
            if r["code"].startswith("NV"):
                expect(f"{pair}: CUDA peer access over NVLink", r["can_access"], 1)
            if r["same_domain"]:
                expect(f"{pair}: CUDA peer access inside your NVLink domain", r["can_access"], 1)
            ctx.log(f"{pair}: peer access {r['can_access']}, P2P performance rank {r['perf_rank']}")
    ctx.metric("gpus", head["gpus_cuda"])
