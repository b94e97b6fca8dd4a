#!/usr/bin/python3
"""Checks each lab's handout (labs/labNN/README.md) against its grading spec.

    scripts/handout_check.py [LAB ...]      (default: every lab with a spec)

A handout must:
  - carry every scored check id in a section title, and end with a points table
    (`| `id` | what | points | backend |`) equal to the spec: same ids, same points;
  - have learning objectives, prerequisites, a time estimate between 4 and 8 hours,
    a 常见错误与调试 section, and references that each carry a version, tag or year;
  - show only commands that work: `./grade labNN FILTER` filters that select checks,
    and modes of the lab's program that exist (from its --help, when it is built);
  - say nothing about the machine it was written on.
Prints one line per problem, `labs/labNN/README.md:LINE: reason`; exits 1 if any.
"""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "grader"))

from gradelib.select import _matches  # noqa: E402
from gradelib.spec import available_labs, load_lab  # noqa: E402

HOURS = re.compile(r"预计(?:用时|时间)?\s*[:：]?\s*(?:约\s*)?(\d+(?:\.\d+)?)\s*(?:[–~\-—至到]\s*(\d+(?:\.\d+)?))?\s*(?:个)?小时")
# a version (2.23, v44, 6.x), a year (2021, SC'15), a commit, an issue (#212), an RFC, or
# a file of this repository (which is versioned with the handout)
VERSIONED = re.compile(r"v?\d+\.(?:\d+|x)|\bv\d+|\b(?:19|20)\d{2}\b|'\d{2}\b|\b[0-9a-f]{7,40}\b|"
                       r"\btag\b|commit|#\d+|RFC\s*\d+|`(?:datasets|docs|tests|common)/", re.I)
# the machine a handout was written on is nobody's business
MACHINE = re.compile(r"\b2\s*核|两核|双核|2 个核|24\s*GiB|Debian 12|本机上测")
TABLE_ROW = re.compile(r"^\|\s*`([A-Za-z0-9][\w.-]*)`\s*\|(.*)\|\s*$")
POINTS = re.compile(r"^\s*(\d+(?:\.\d+)?)")


def sections(lines):
    """(line number, level, title) of every heading outside code blocks."""
    out, code = [], False
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            code = not code
        elif not code and line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append((i, level, line[level:].strip()))
    return out


def section_body(lines, heads, title_re):
    """The lines (number, text) of the first section whose title matches title_re."""
    for k, (i, level, title) in enumerate(heads):
        if re.search(title_re, title):
            end = len(lines)
            for j, lv, _ in heads[k + 1:]:
                if lv <= level:
                    end = j - 1
                    break
            return [(n, lines[n - 1]) for n in range(i + 1, end + 1)]
    return None


def code_lines(lines):
    """(line number, text) of every line inside ``` blocks."""
    out, code = [], False
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            code = not code
        elif code:
            out.append((i, line))
    return out


def program_modes(lab, program):
    """The modes the built lab program lists in --help, or None when it is not built."""
    for kind in ("solutions", "labs"):
        path = os.path.join(ROOT, "build", kind, lab, program)
        if os.access(path, os.X_OK):
            try:
                r = subprocess.run([path, "--help"], capture_output=True, text=True,
                                   timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                return None
            text = r.stdout + r.stderr
            if "modes:" not in text:
                return None
            block = text.split("modes:", 1)[1].split("\n\n", 1)[0]
            return {ln.split()[0] for ln in block.splitlines() if ln.strip()}
    return None


def check_lab(name):
    problems = []
    path = os.path.join(ROOT, "labs", name, "README.md")
    rel = os.path.relpath(path, ROOT)

    def bad(line, why):
        problems.append(f"{rel}:{line}: {why}")

    spec = load_lab(ROOT, name)
    if not os.path.isfile(path):
        return [f"{rel}:0: no handout"]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    text = "\n".join(lines).replace("**", "")
    heads = sections(lines)
    checks = {c.id: c for c in spec.checks}

    # --- the points table ------------------------------------------------------------
    table = section_body(lines, heads, r"评分表")
    if table is None:
        bad(len(lines), "no 评分表 section (the points table)")
        table = []
    listed = {}
    for n, line in table:
        m = TABLE_ROW.match(line)
        if not m:
            continue
        cid, cells = m.group(1), [c.strip() for c in m.group(2).split("|")]
        pts = next((float(p.group(1)) for p in map(POINTS.match, cells[1:]) if p), None)
        listed[cid] = (n, pts)
        if cid not in checks:
            bad(n, f"`{cid}` is in the points table but not in the spec")
        elif pts is None:
            bad(n, f"`{cid}`: no points in its row")
        elif abs(pts - float(checks[cid].points)) > 1e-9:
            bad(n, f"`{cid}`: {pts:g} points in the table, {checks[cid].points:g} in the spec")
    # a title may name a family of checks: `cpu.parse.*`, `cpu.parse.<机器>`, `cpu.parse`
    titled = [re.sub(r"<[^>]*>", "*", t)
              for t in re.findall(r"`([^`]+)`", " ".join(t for _, _, t in heads))]
    for cid, c in checks.items():
        if c.points and cid not in listed:
            bad(table[0][0] if table else len(lines), f"`{cid}` ({c.points:g} points) is "
                "missing from the points table")
        if c.points and not any(_matches(t, cid) for t in titled):
            bad(1, f"`{cid}` ({c.points:g} points) is in no section title")

    # --- what every handout has ------------------------------------------------------
    if not any(re.search(r"学习目标", t) for _, _, t in heads):
        bad(1, "no 学习目标 section (learning objectives)")
    if not re.search(r"先修|预备知识|前置知识", text):
        bad(1, "no prerequisites (先修 / 预备知识)")
    hours = HOURS.search(text)
    if not hours:
        bad(1, "no time estimate (预计用时：N–M 小时)")
    else:
        lo = float(hours.group(1))
        hi = float(hours.group(2) or lo)
        if lo < 4 or hi > 8 or lo > hi:
            bad(text[:hours.start()].count("\n") + 1,
                f"time estimate {hours.group(0)} is outside 4-8 hours")
    if not any("常见错误与调试" in t for _, _, t in heads):
        bad(1, "no 常见错误与调试 section")
    refs = section_body(lines, heads, r"参考")
    if refs is None:
        bad(1, "no 参考资料 section")
    else:
        items = []  # (first line, the item's whole text): items run on over lines
        for n, ln in refs:
            if re.match(r"\s*(?:[-*]|\d+\.)\s", ln):
                items.append((n, ln))
            elif items and ln.strip():
                items[-1] = (items[-1][0], items[-1][1] + " " + ln.strip())
            elif not ln.strip() and items:
                items.append((0, None))  # a blank line ends the item
        items = [(n, ln) for n, ln in items if ln is not None]
        if not items:
            bad(1, "参考资料 lists nothing")
        for n, ln in items:
            if not VERSIONED.search(ln):
                bad(n, "reference without a version, tag or year: " + ln.strip()[:60])

    # --- commands shown --------------------------------------------------------------
    modes = program_modes(name, spec.program or name)
    for n, ln in code_lines(lines):
        words = ln.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] == "./grade" and words[1] == name:
            for w in words[2:]:
                if w.startswith("-"):
                    break
                if not any(_matches(w.strip("'\""), cid) for cid in checks):
                    bad(n, f"`./grade {name} {w}` selects no check")
        for k, w in enumerate(words[:-1]):
            if modes is not None and os.path.basename(w) == (spec.program or name) and \
                    ("/" in w) and not words[k + 1].startswith("-"):
                if words[k + 1] not in modes:
                    bad(n, f"`{words[k + 1]}` is not a mode of {spec.program or name} "
                        f"(modes: {', '.join(sorted(modes))})")
    for n, ln in enumerate(lines, 1):
        m = MACHINE.search(ln)
        if m:
            bad(n, f"speaks of a particular machine ('{m.group(0)}')")
    return problems


def main(argv):
    labs = argv or [lab for lab in available_labs(ROOT)
                    if os.path.isdir(os.path.join(ROOT, "labs", lab))]
    problems = []
    for lab in labs:
        problems += check_lab(lab)
    for p in problems:
        print(p)
    print(f"handout-check: {len(labs)} handouts, {len(problems)} problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
