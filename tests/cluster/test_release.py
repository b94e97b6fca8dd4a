"""scripts/student_release.sh: the student copy has no solutions, builds, and grades skeletons."""

import os
import shutil
import subprocess
import tempfile
import unittest

from tests.cluster import helpers as h

SCRIPT = os.path.join(h.REPO, "scripts", "student_release.sh")
LABS = ["lab01", "lab02"]


class StudentRelease(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        if shutil.which("git") is None or shutil.which("mpicc") is None:
            raise unittest.SkipTest("needs git and mpicc")
        tmp = tempfile.mkdtemp(prefix="commlab-release-")
        cls.addClassCleanup(shutil.rmtree, tmp, True)
        cls.out = os.path.join(tmp, "commlab")
        r = subprocess.run([SCRIPT, cls.out], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError("student_release.sh failed:\n" + r.stdout + r.stderr)

    def test_no_solutions_or_hidden_material(self):
        self.assertFalse(os.path.exists(os.path.join(self.out, "solutions")))
        self.assertFalse(os.path.exists(os.path.join(self.out, "tests", "labs")))
        for dirpath, _, files in os.walk(self.out):
            for f in files:
                if f.endswith((".c", ".h")):
                    with open(os.path.join(dirpath, f), errors="replace") as fh:
                        self.assertNotIn("BEGIN SOLUTION", fh.read(), os.path.join(dirpath, f))
        for must in ("grade", "Makefile", "grader/gradelib/cli.py", "labs/lab01/lab01.c",
                     "labs/lab01/README.md", "scripts/netns/netns.sh"):
            self.assertTrue(os.path.exists(os.path.join(self.out, must)), must)

    def test_skeletons_build_and_grade_to_zero(self):
        r = subprocess.run(["make", "-s"] + LABS, cwd=self.out, capture_output=True, text=True,
                           timeout=400)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for lab in LABS:
            out = os.path.join(self.out, f"{lab}.json")
            r = subprocess.run([h.PYTHON, "grader/grade.py", "--no-install", "--no-build", lab,
                                "--json", out], cwd=self.out, capture_output=True, text=True,
                               env=dict(os.environ, COMMLAB_GRADE_BACKENDS="cpu,sim"),
                               timeout=300)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            data = h.load(out)
            self.assertEqual(data["score"], 0, r.stdout)
            self.assertGreater(data["max_score"], 0)
            for t in data["tests"]:
                self.assertNotIn(t["verdict"], ("BUILD-ERROR", "CRASH"), t)
                self.assertNotIn("error in the check", t["output"], t)
                self.assertNotIn("No such file", t["output"], t)


if __name__ == "__main__":
    unittest.main()
