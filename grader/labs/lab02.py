"""lab02: NVLink/PCIe topology discovery.

The student's parser must reproduce, cell for cell, the hand-checked JSON of
every recorded matrix in datasets/topologies (tests/topo/expected), more real
matrices from public posts (tests/topo/real), and reject malformed files with
the right line. On a GPU machine the CUDA probe is compared with nvidia-smi.
"""

import glob
import json
import os
import re

from gradelib import CheckFailed, Lab, expect
from gradelib.symbols import forbid_symbols

lab = Lab("lab02", title="NVLink/PCIe 拓扑探测", program="lab02")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(ROOT, "tests", "topo", "expected")

VALID_CODES = {"X": ("X", 0), "NV1": ("NV", 1), "NV2": ("NV", 2), "NV4": ("NV", 4),
               "NV12": ("NV", 12), "NV18": ("NV", 18), "PIX": ("PIX", 0), "PXB": ("PXB", 0),
               "PHB": ("PHB", 0), "NODE": ("NODE", 0), "SYS": ("SYS", 0)}
INVALID_CODES = ["FOO", "NV", "NV0", "nv4", "SYSX", "PIXX", "N/A", "-"]

SPLITS = [  # text, want, expected codes (None: must be rejected), expected rest
    ("\tNV1\tSYS  PIX\t0-3\t1", 3, ["NV1", "SYS", "PIX"], "\t0-3\t1"),
    (" X   NV12NV12 SYSSYS PXB", 6, ["X", "NV12", "NV12", "SYS", "SYS", "PXB"], ""),
    ("PHB NODE PIX  X", 2, ["PHB", "NODE"], " PIX  X"),
    ("SYS FOO SYS", 3, None, None),
]

# Malformed files and the lines a good parser may blame: the library's line, and
# for a matrix that is not square, the first row that shows it.
MALFORMED = {
    "short-row.topo.txt": {3}, "unknown-code.topo.txt": {2}, "row-name-mismatch.topo.txt": {4},
    "not-square.topo.txt": {1, 2}, "extra-cell.topo.txt": {2}, "x-off-diagonal.topo.txt": {2},
    "bad-numa.topo.txt": {2}, "duplicate-row.topo.txt": {3}, "empty.topo.txt": {1, 2},
    "unknown-column.topo.txt": {1, 2},
}


def first_difference(want, got, path="topology"):
    """Returns a description of the first place where got differs from want, or None."""
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


def check_parse(ctx, path):
    """Runs the student's parser on path and compares with the hand-checked JSON."""
    name = os.path.basename(path)
    with open(os.path.join(EXPECTED, name + ".json"), encoding="utf-8") as f:
        want = json.load(f)
    out = ctx.out(name + ".json")
    ctx.run([ctx.program, "parse", os.path.relpath(path, ctx.root), "--json", out])
    got = ctx.load_json(name + ".json")
    diff = first_difference(want, got)
    if diff:
        raise CheckFailed(f"{name} parsed differently from the recorded topology",
                          expected=f"tests/topo/expected/{name}.json", found=diff)


@lab.check("cpu.build", "Only allowed library calls", points=0, timeout=20)
def cpu_build(ctx):
    forbid_symbols(ctx, ["cl_topo_parse_smi", "cl_topo_parse_nccl", "cl_topo_load",
                         "cl_link_from_code"], why="this lab is about writing the parser")


@lab.check("cpu.codes", "Legend codes", points=10, parent="cpu.build", timeout=20)
def cpu_codes(ctx, _):
    codes = list(VALID_CODES) + INVALID_CODES
    ctx.run([ctx.program, "codes", *codes, "--json", ctx.out("codes.json")])
    for row in ctx.load_json("codes.json"):
        code = row["code"]
        if code in VALID_CODES:
            kind, links = VALID_CODES[code]
            expect(f"status of {code!r}", row["status"], "success")
            expect(f"kind of {code!r}", row["kind"], kind)
            expect(f"NVLink count of {code!r}", row["nvlinks"], links)
            expect(f"stored code of {code!r}", row["stored"], code)
        else:
            expect(f"status of {code!r} (not a legend code)", row["status"], "malformed input")


@lab.check("cpu.split", "Splitting a row into cells", points=10, parent="cpu.build", timeout=20)
def cpu_split(ctx, _):
    for i, (text, want, codes, rest) in enumerate(SPLITS):
        ctx.run([ctx.program, "split", text, str(want), "--json", ctx.out(f"split{i}.json")])
        got = ctx.load_json(f"split{i}.json")
        if codes is None:
            expect(f"result for {text!r} (has a non-code)", got["count"], -1)
            continue
        expect(f"count for {text!r}", got["count"], len(codes))
        expect(f"codes of {text!r}", got["codes"], codes)
        expect(f"rest after {want} codes of {text!r}", got["rest"], rest)


def register_dataset_checks():
    files = sorted(glob.glob(os.path.join(ROOT, "datasets", "topologies", "*.topo.txt")))
    for path in files:
        stem = os.path.basename(path)[: -len(".topo.txt")]

        def run(ctx, _, path=path):
            check_parse(ctx, path)

        lab.check(f"cpu.parse.{stem}", f"Recorded matrix: {stem}", points=6, parent="cpu.build",
                  timeout=20)(run)


register_dataset_checks()


@lab.check("cpu.real", "More real matrices (other drivers and machines)", points=10,
           parent="cpu.build", timeout=30)
def cpu_real(ctx, _):
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "topo", "real", "*.topo.txt")))
    if not files:
        raise CheckFailed("no real matrices found", expected="tests/topo/real/*.topo.txt",
                          found="none")
    for path in files:
        check_parse(ctx, path)
    ctx.metric("files", len(files))


@lab.check("cpu.malformed", "Malformed files: clear error with the line number", points=15,
           parent="cpu.build", timeout=30)
def cpu_malformed(ctx, _):
    for name, lines in sorted(MALFORMED.items()):
        rel = os.path.join("tests", "topo", "bad", name)
        res = ctx.run([ctx.program, "parse", rel], check=False)
        if res.crashed or res.timed_out:
            ctx.require_ok(res)
        expect(f"exit status for {name}", res.rc, 2)
        m = re.search(re.escape(rel) + r":(\d+): \S", res.stderr)
        if not m:
            raise CheckFailed(f"{name}: the error does not say where",
                              expected=f"a message '{rel}:LINE: reason'",
                              found=res.stderr.strip()[-200:] or "(nothing on stderr)")
        if int(m.group(1)) not in lines:
            raise CheckFailed(f"{name}: the error names the wrong line",
                              expected="line " + " or ".join(map(str, sorted(lines))),
                              found=f"line {m.group(1)}: {res.stderr.strip()[-160:]}")


@lab.check("gpu.probe", "CUDA probe agrees with nvidia-smi topo -m", points=10, backend="gpu",
           needs={"gpus": 1}, parent="cpu.build", timeout=60)
def gpu_probe(ctx, _):
    smi = ctx.run(["nvidia-smi", "topo", "-m"])
    with open(ctx.out("smi.txt"), "w", encoding="utf-8") as f:
        f.write(smi.stdout)
    ctx.run([os.path.join(ctx.root, "commlab"), "topo", ctx.out("smi.txt"), "--json"])
    topo = json.loads(ctx.results[-1].stdout)
    ctx.run([ctx.program, "probe", "--json", ctx.out("probe.json")])
    probe = ctx.load_json("probe.json")
    gpus = [i for i, d in enumerate(topo["devices"]) if d.startswith("GPU")]
    expect("GPUs seen by CUDA vs nvidia-smi", probe["ngpus"], len(gpus))
    for i in gpus:
        numa = topo["numa_affinity"].get(f"GPU{i}")
        if numa is not None:
            expect(f"NUMA node of GPU{i}", probe["numa_node"][i], numa)
        for j in gpus:
            if i != j and topo["links"][i][j].startswith("NV"):
                expect(f"peer access GPU{i}->GPU{j} over {topo['links'][i][j]}",
                       probe["can_access"][i][j], 1)
    ctx.metric("gpus", len(gpus))
