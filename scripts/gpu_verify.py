#!/usr/bin/python3
"""gpu_verify.py: the planning and the record of scripts/gpu-verify.sh (Python standard library).

  gpu_verify.py plan GPUS OUTDIR [LAB...]
                                     one line per lab: LAB TIMEOUT CHECK... (the GPU checks
                                     this machine can run); OUTDIR/rows.tsv gets the others'
                                     rows
  gpu_verify.py summarize OUTDIR     summary.md and record.json from what the run left there

A GPU check whose needs this machine cannot meet (needs 2 GPUs, found 1) is not handed to
the grader, which would first run its parents for nothing: its row says why at once.
"""

import datetime
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "grader"))

from gradelib.spec import available_labs, load_lab  # noqa: E402


def plan(gpus, out, only=()):
    """Writes the labs' runnable GPU checks to stdout; rows for the others to OUTDIR/rows.tsv."""
    rows = []
    for name in available_labs(ROOT):
        if only and name not in only:
            continue
        try:
            lab = load_lab(ROOT, name)
        except Exception as e:      # a spec that cannot load is a row, not the end of the run
            rows.append((name, "-", "ERROR", "", f"the spec does not load: {e}"))
            continue
        run, limit = [], 30
        for chk in lab.checks:
            if chk.backend != "gpu":
                continue
            want = chk.needs.get("gpus", 1)
            # Single-GPU checks go to the grader even without a GPU: there they must
            # skip at once, with the reason, which is what a run here tests.
            if want > max(gpus, 1):
                rows.append((name, chk.id, "SKIP", f"-/{chk.points:g}",
                             f"not run: needs {want} GPUs, this machine has {gpus}"))
                continue
            run.append(chk.id)
            limit += chk.timeout + sum(d.timeout for d in lab.dependencies(chk))
        if run:
            print(name, int(limit), *run)
    with open(os.path.join(out, "rows.tsv"), "a", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


def _one_line(text, n=220):
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[:n - 3] + "..."


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def summarize(out):
    """Turns the run's files into summary.md (for people) and record.json (for tools)."""
    rows = []
    for line in _read(os.path.join(out, "rows.tsv")).splitlines():
        parts = line.split("\t")
        if len(parts) == 5:
            rows.append(dict(zip(("lab", "check", "verdict", "points", "reason"), parts)))
    smoke = None
    try:
        with open(os.path.join(out, "smoke.json"), encoding="utf-8") as f:
            smoke = json.load(f)
    except (OSError, ValueError):
        pass
    if smoke is not None:
        if not smoke.get("steps"):
            rows.append({"lab": "smoke", "check": "gpu_smoke", "verdict":
                         "SKIP" if smoke.get("status") == "unsupported" else "ERROR",
                         "points": "", "reason": _one_line(smoke.get("error", ""))})
        for s in smoke.get("steps", []):
            rows.append({"lab": "smoke", "check": s["name"],
                         "verdict": "PASS" if s["ok"] else "FAIL", "points": "",
                         "reason": _one_line(s.get("detail", ""))})
    for name in sorted(os.listdir(out)):
        if not (name.startswith("lab") and name.endswith(".json")):
            continue
        try:
            with open(os.path.join(out, name), encoding="utf-8") as f:
                res = json.load(f)
        except (OSError, ValueError):
            continue
        for t in res.get("tests", []):
            metrics = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                for k, v in t.get("metrics", {}).items()
                                if not isinstance(v, (list, dict)))
            reason = _one_line(t.get("output", ""))
            rows.append({"lab": res.get("lab", name[:-5]), "check": t["id"],
                         "verdict": t.get("verdict", t.get("status", "?")),
                         "points": f"{t['score']:g}/{t.get('points', t['max_score']):g}",
                         "reason": "; ".join(x for x in (metrics, reason) if x),
                         "seconds": t.get("elapsed")})
    order = {"smoke": 0}
    rows.sort(key=lambda r: (order.get(r["lab"], 1), r["lab"]))
    inventory = _read(os.path.join(out, "inventory.txt"))
    facts = {}
    for line in inventory.splitlines():
        if line.startswith("# ") and ": " in line:
            k, v = line[2:].split(": ", 1)
            facts[k.strip()] = v.strip()
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    record = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "facts": facts, "counts": counts, "rows": rows}
    with open(os.path.join(out, "record.json"), "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    md = [f"# GPU verification, {record['date']}", ""]
    for k in ("commit", "build", "gpus", "driver", "cuda", "nccl", "mpi", "machine"):
        if k in facts:
            md.append(f"- {k}: {facts[k]}")
    md += ["", "| verdict | count |", "|---|---|"]
    md += [f"| {k} | {v} |" for k, v in sorted(counts.items())]
    md += ["", "| lab | check | verdict | points | measured, or why |", "|---|---|---|---|---|"]
    for r in rows:
        reason = r["reason"].replace("|", "\\|")
        md.append(f"| {r['lab']} | {r['check']} | {r['verdict']} | {r['points']} | {reason} |")
    md += ["", "The inventory (inventory.txt), the build (build.log), ldd of the binaries "
           "(ldd.txt), each lab's grader log and JSON are in this folder.", ""]
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print("\n".join(md))


def main(argv):
    if len(argv) >= 4 and argv[1] == "plan":
        plan(int(argv[2]), argv[3], set(argv[4:]))
        return 0
    if len(argv) == 3 and argv[1] == "summarize":
        summarize(argv[2])
        return 0
    sys.stderr.write("usage: gpu_verify.py plan GPUS OUTDIR [LAB...] | summarize OUTDIR\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
