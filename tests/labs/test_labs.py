"""Every lab discriminates: the reference gets full marks, the untouched skeleton
fails every correctness check, and each typical mistake (tests/labs/mutants/labNN.py) is
caught by the checks named for it."""

import collections
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

from tests.labs.mutants import all_mutants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
# Seconds of grading per lab in this run, summed over every grade() (each lab's share of
# the suite's time; docs/writing-a-lab.md states the budget).
SPENT = collections.Counter()
# Seconds each check ran (queueing excluded), summed over the run: where a lab's share goes.
CHECK_SPENT = collections.Counter()
PROGRESS = re.compile(r"^\[\d+/\d+\] (\S+) .*\((\d+\.\d+) s[,)]", re.M)


def labs_with_solutions():
    """Every lab with a reference, or those named in COMMLAB_LABS (lab02,lab03)."""
    labs = sorted(d for d in os.listdir(os.path.join(ROOT, "solutions")) if d.startswith("lab"))
    only = [x for x in os.environ.get("COMMLAB_LABS", "").split(",") if x]
    return [lab for lab in labs if not only or lab in only]


def grade(lab, *args, label=None):
    """Runs ./grade on lab and returns (exit status, results JSON). Says on stderr how long
    it took, for progress and for each lab's share of the suite's time."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        proc = subprocess.run([PYTHON, os.path.join(ROOT, "grader", "grade.py"), lab, *args,
                               "--no-install", "--backend", "cpu,sim", "--json", out],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=600)
        if not os.path.exists(out):
            raise AssertionError(f"./grade {lab} {' '.join(args)} wrote no JSON:\n{proc.stdout}")
        with open(out, encoding="utf-8") as f:
            res = json.load(f)
    what = label or " ".join(args) or "skeleton"
    took = time.monotonic() - start
    SPENT[lab] += took
    for check, seconds in PROGRESS.findall(proc.stdout):
        CHECK_SPENT[f"{lab} {check}"] += float(seconds)
    print(f"  [{took:5.1f} s] {lab} {what}", file=sys.stderr, flush=True)
    return proc.returncode, res, proc.stdout


def mutant_source(lab, mutant, tmp):
    """Writes the solution with one edit into tmp and returns tmp."""
    path = os.path.join(ROOT, "solutions", lab, f"{lab}.c")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = text.count(mutant.old)
    if found != mutant.count:
        raise AssertionError(f"mutant '{mutant.name}': its text occurs {found} times in "
                             f"{path}, expected {mutant.count}; update tests/labs/mutants.py")
    with open(os.path.join(tmp, f"{lab}.c"), "w", encoding="utf-8") as f:
        f.write(text.replace(mutant.old, mutant.new))
    return tmp


class LabDiscrimination(unittest.TestCase):
    # Labs are graded two at a time, in every test below: the machine-wide admission
    # queue (grader/gradelib/admission.py) still gives each performance check the
    # machine alone, and load can only make a wrong program lose more points.
    def test_reference_full_marks(self):
        with ThreadPoolExecutor(max_workers=2) as pool:
            for lab, rc, res, log, failed in pool.map(grade_reference, labs_with_solutions()):
                with self.subTest(lab=lab):
                    self.assertGreater(res["max_score"], 0)
                    self.assertEqual(failed, [], f"{lab} reference failed checks:\n{log}")
                    self.assertEqual(rc, 0, log)

    def test_skeleton_fails_every_correctness_check(self):
        with ThreadPoolExecutor(max_workers=2) as pool:
            for lab, (rc, res, log) in zip(labs_with_solutions(),
                                           pool.map(grade, labs_with_solutions())):
                with self.subTest(lab=lab):
                    scored = [t for t in res["tests"]
                              if t["max_score"] > 0 and t["status"] != "skipped"]
                    self.assertTrue(scored, f"{lab}: no scored checks ran")
                    passed = [t["id"] for t in scored if t["status"] == "passed"]
                    self.assertEqual(passed, [], f"{lab} skeleton passes checks:\n{log}")
                    self.assertEqual(res["score"], 0, log)
                    self.assertNotEqual(rc, 0)

    def test_typical_mistakes_are_caught(self):
        # One lab's mutants in turn (the per-lab lock keeps one lab's runs apart).
        every = {lab: m for lab, m in all_mutants().items() if lab in labs_with_solutions()}
        for lab, mutants in sorted(every.items()):
            self.assertGreaterEqual(len(mutants), 3, f"{lab}: fewer than 3 mutants")
        with ThreadPoolExecutor(max_workers=2) as pool:
            verdicts = pool.map(grade_mutants, sorted(every.items()))
            for lab, mutant, rc, res, log in itertools.chain.from_iterable(verdicts):
                with self.subTest(lab=lab, mutant=mutant.name):
                    status = {t["id"]: t for t in res["tests"]}
                    for check in mutant.caught_by:
                        self.assertIn(check, status, f"{lab}: no check {check}")
                        t = status[check]
                        self.assertNotEqual(
                            (t["status"], t["score"]), ("passed", t["max_score"]),
                            f"{lab}: mutant '{mutant.name}' not caught by {check}:\n{log}")
                    self.assertNotEqual(rc, 0)


def grade_reference(lab):
    """Grades the reference; returns (lab, rc, results, log, failed check ids)."""
    rc, res, log = grade(lab, "--solution")
    failed = [t["id"] for t in res["tests"] if t["status"] == "failed"]
    # A performance ratio of the reference against its baseline can dip when
    # something else loads the machine: re-measure only those checks, twice at most.
    # A real regression fails every time.
    perf = {t["id"] for t in res["tests"] if "ratio" in t.get("metrics", {})}
    for _ in range(2):
        if not failed or not set(failed) <= perf:
            break
        rc, again, log = grade(lab, "--solution", *failed)
        failed = [t["id"] for t in again["tests"] if t["id"] in failed and t["status"] == "failed"]
    return lab, rc, res, log, failed


def grade_mutants(item):
    """Grades each mutant of one lab in turn; returns (lab, mutant, rc, results, log)s.
    Only the checks that must catch a mutant are selected (their parents and the
    correctness checks gating them run too, unscored)."""
    lab, mutants = item
    out = []
    for mutant in mutants:
        with tempfile.TemporaryDirectory() as tmp:
            rc, res, log = grade(lab, "--source", mutant_source(lab, mutant, tmp),
                                 *mutant.caught_by, label=f"mutant '{mutant.name}'")
        out.append((lab, mutant, rc, res, log))
    return out


def tearDownModule():
    if SPENT:
        rows = "  ".join(f"{lab} {t:.0f}" for lab, t in SPENT.most_common())
        print(f"\nseconds of grading per lab, most first: {rows}", file=sys.stderr, flush=True)
    if CHECK_SPENT:
        rows = "  ".join(f"{c} {t:.0f}" for c, t in CHECK_SPENT.most_common(25))
        print(f"seconds of running per check (queueing excluded), {sum(CHECK_SPENT.values()):.0f}"
              f" in all; the 25 most: {rows}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    unittest.main()
