"""The toy lab (tests/toylab): a lab written against the plug-in API gets main(), the
options, the student's process, ranks on cpu and sim, the data check, the table and the
JSON from the harness, with none of its own. `make unit-test` builds it first."""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib.mpi import MPI_ENV  # noqa: E402

BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
PROGRAM = os.path.join(BUILD, "tests", "toylab", "toylab")


def run(*argv, mpi=0):
    env = dict(os.environ, **MPI_ENV)
    prefix = ["mpirun", "-np", str(mpi)] if mpi else []
    return subprocess.run(prefix + [PROGRAM, *argv], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


class ToyLab(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(PROGRAM):
            self.skipTest(f"{PROGRAM} is not built (make toylab)")

    def test_plugin_has_no_main_options_or_json(self):
        with open(os.path.join(ROOT, "tests", "toylab", "driver.c"), encoding="utf-8") as f:
            code = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        for word in ("main(", "argv", "getopt", "printf", "json", "fopen", "clock_gettime"):
            self.assertNotIn(word, code, f"the toy plug-in does {word} itself")

    def test_cases_mode_table_and_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            r = run("scale", "x=2", "k=3.5", "--json", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, r"(?m)^\s+1\s+success\s+7\s*$")
            with open(out, encoding="utf-8") as f:
                res = json.load(f)
        self.assertEqual((res["lab"], res["mode"], res["status"]), ("toylab", "scale", "ok"))
        self.assertEqual(res["rows"][0]["out"], 7)

    def test_cases_mode_runs_here_whatever_the_backend(self):
        for backend in ("sim", "gpu"):
            r = run("scale", "x=2", "k=3", "--backend", backend)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout, r"(?m)^\s+1\s+success\s+6\s*$")

    def test_bad_case_gets_its_reason_in_its_row(self):
        r = run("scale", "x=2")
        self.assertRegex(r.stdout, r"invalid argument\s+case 1 has no 'k'")

    def test_unknown_mode_refused(self):
        r = run("nosuchmode")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("nosuchmode", r.stderr)

    def shift_rows(self, *argv, mpi=0):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            r = run("shift", "--bytes", "64K", "--json", out, *argv, mpi=mpi)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(out, encoding="utf-8") as f:
                return json.load(f)

    def test_ranks_mode_on_cpu(self):
        res = self.shift_rows(mpi=3)
        self.assertEqual((res["backend"], res["ranks"]), ("cpu", 3))
        self.assertEqual(res["rows"][0]["wrong"], 0)
        self.assertEqual(res["rows"][0]["status"], "success")

    def test_ranks_mode_on_sim(self):
        res = self.shift_rows("--backend", "sim", "--nranks", "64")
        self.assertEqual((res["backend"], res["ranks"]), ("sim", 64))
        self.assertEqual(res["rows"][0]["wrong"], 0)
        self.assertGreater(res["rows"][0]["time_us"], 0)

    def test_lab_option_read_and_checked_by_the_harness(self):
        res = self.shift_rows("--backend", "sim", "--nranks", "8", "--hops", "3")
        self.assertEqual(res["rows"][0]["wrong"], 0)
        for bad in ("0", "8", "2.5", "two"):
            r = run("shift", "--bytes", "64K", "--backend", "sim", "--nranks", "8", "--hops", bad)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(f"--hops wants a whole number from 1 to 7, not '{bad}'", r.stderr)

    def test_too_few_ranks_refused(self):
        r = run("shift", "--bytes", "64K")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("at least 2 ranks", r.stderr)


if __name__ == "__main__":
    unittest.main()
