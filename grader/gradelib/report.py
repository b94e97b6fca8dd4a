"""The report: a table, failure details, score lines, and the results.json export."""

import json
import os
import unicodedata

from .progress import fmt_points
from .verdicts import BUILD_ERROR, PASS, SKIP


def totals(outcomes):
    """Returns (score, max_score, passed, failed, skipped) over the scored checks; max_score
    leaves out skipped checks."""
    scored = [o for o in outcomes if o.scored]
    score = sum(o.score for o in scored if not o.skipped)
    max_score = sum(o.check.points for o in scored if not o.skipped)
    passed = sum(1 for o in scored if o.verdict == PASS)
    skipped = sum(1 for o in scored if o.skipped)
    return (round(score, 2), max_score, passed, len(scored) - passed - skipped, skipped)


def full_marks(outcomes):
    """True when every scored check that was not skipped passed."""
    return all(o.verdict in (PASS, SKIP) for o in outcomes if o.scored)


def _width(s):
    """Returns the terminal width of s (CJK characters take two columns)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _fit(s, width):
    """Returns s cut to `width` columns (with '...') and padded to exactly that width."""
    if _width(s) > width:
        while _width(s) > width - 3:
            s = s[:-1]
        s += "..."
    return s + " " * (width - _width(s))


def _indent(text, pad="    "):
    return "\n".join(pad + line if line else line for line in text.splitlines())


def _rel(path, root):
    return os.path.relpath(path, root) if path else path


def text(lab, outcomes, root):
    """Returns the human report (ends with the 'N passed, N failed, N skipped' line)."""
    lines = [f"{lab.name}: {lab.title}" if lab.title else lab.name, ""]
    wid = max([len(o.check.id) for o in outcomes] + [2])
    twid = min(max([_width(o.check.title) for o in outcomes] + [5]), 44)
    lines.append(f"  {'id':<{wid}}  {'title':<{twid}}  {'verdict':<11}  points")
    for o in outcomes:
        title = _fit(o.check.title, twid)
        if not o.scored:
            pts = "(not scored)"
        elif o.skipped:
            pts = f"-/{fmt_points(o.check.points)}"
        else:
            pts = f"{fmt_points(o.score)}/{fmt_points(o.check.points)}"
        lines.append(f"  {o.check.id:<{wid}}  {title}  {o.verdict:<11}  {pts}")
    bad = [o for o in outcomes if o.failed and o.verdict != BUILD_ERROR]
    built = [o for o in outcomes if o.verdict == BUILD_ERROR]
    if built:
        lines += ["", "Build error (every check is BUILD-ERROR):", _indent(built[0].message),
                  f"    reproduce (from the repo root): {built[0].command}",
                  f"    log: {_rel(built[0].log_path, root)}"]
    if bad:
        lines += ["", "Details:"]
        for o in bad:
            extra = "" if o.scored else ", not scored"
            lines.append(f"--- {o.check.id}: {o.check.title} [{o.verdict}{extra}]")
            lines.append(_indent(o.message or "(no message)"))
            if o.command:
                lines.append(f"    reproduce (from the repo root): {o.command}")
            if o.log_path:
                lines.append(f"    log: {_rel(o.log_path, root)}")
    perf = [o for o in outcomes if o.check.is_performance and o.metrics.get("ratio") is not None]
    if perf:
        lines += ["", "Performance:"]
        for o in perf:
            lines.append(f"  {o.check.id}: {fmt_points(o.score)}/{fmt_points(o.check.points)}"
                         f" points; " + o.message.replace("\n", "; "))
    plots = [p for o in outcomes for p in o.plots]
    if plots:
        lines += [""] + plots
    score, max_score, passed, failed, skipped = totals(outcomes)
    lines += ["", f"Score: {fmt_points(score)}/{fmt_points(max_score)}"]
    skips = [o for o in outcomes if o.scored and o.skipped]
    if skips:
        lines.append("Skipped (not counted): " + "; ".join(
            f"{o.check.id} ({fmt_points(o.check.points)} pts): "
            f"{o.message[len('skipped: '):] if o.message.startswith('skipped: ') else o.message}"
            for o in skips))
    else:
        lines.append("Skipped: none")
    lines.append(f"{passed} passed, {failed} failed, {skipped} skipped")
    return "\n".join(lines) + "\n"


def _status(o):
    if o.skipped:
        return "skipped"
    return "passed" if o.verdict == PASS else "failed"


def results(lab, outcomes, backends, root):
    """Returns the Gradescope-style results dict for the scored checks."""
    score, max_score, passed, failed, skipped = totals(outcomes)
    tests = []
    for o in outcomes:
        if not o.scored:
            continue
        out = o.message or ""
        if o.command and not o.skipped:
            out += f"\nreproduce (from the repo root): {o.command}"
        tests.append({
            "id": o.check.id,
            "name": o.check.title,
            "score": 0 if o.skipped else o.score,
            "max_score": 0 if o.skipped else o.check.points,
            "points": o.check.points,
            "status": _status(o),
            "verdict": o.verdict,
            "backend": o.check.backend,
            "kind": o.check.kind,
            "output": out.strip(),
            "metrics": o.metrics,
            "elapsed": round(o.elapsed, 3),
        })
    return {"lab": lab.name, "score": score, "max_score": max_score, "backends": backends,
            "passed": passed, "failed": failed, "skipped": skipped, "tests": tests}


def write_json(path, data):
    """Writes data as indented JSON to path (parents created)."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=2, default=str)
        f.write("\n")


def autolab_line(outcomes):
    """Autolab's last line of output: {"scores": {check id: points}, "scoreboard": [total,
    then the performance ratios of the scored performance checks, in check order]}
    (autolab/Autolab docs/lab.md: the autograder's last stdout line)."""
    score = totals(outcomes)[0]
    scores = {o.check.id: 0 if o.skipped else o.score for o in outcomes if o.scored}
    board = [score] + [o.metrics.get("ratio", 0) for o in outcomes
                       if o.scored and o.check.is_performance]
    return json.dumps({"scores": scores, "scoreboard": board}, separators=(",", ":"))


def prairielearn(lab, outcomes, root):
    """PrairieLearn's external-grader results.json: score in [0, 1]; a build error makes the
    submission not gradable, so a typo costs no attempt."""
    built = [o for o in outcomes if o.verdict == BUILD_ERROR]
    score, max_score, passed, failed, skipped = totals(outcomes)
    tests = []
    for o in outcomes:
        if not o.scored:
            continue
        tests.append({"name": o.check.id, "description": o.check.title,
                      "points": 0 if o.skipped else o.score,
                      "max_points": 0 if o.skipped else o.check.points,
                      "message": (o.message or o.verdict).splitlines()[0] if (o.message or o.verdict) else "",
                      "output": o.message or ""})
    out = {"gradable": not built, "score": round(score / max_score, 4) if max_score else 0.0,
           "message": f"{passed} passed, {failed} failed, {skipped} skipped",
           "output": text(lab, outcomes, root), "tests": tests}
    if built:
        out["format_errors"] = [built[0].message]
        out["score"] = 0.0
    return out
