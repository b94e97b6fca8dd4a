"""Held-back grading material (.release-exclude) exists in the course tree and never reaches
the student release: lab15's hidden clusters are graded officially, never shipped."""

import glob
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def excluded():
    with open(os.path.join(ROOT, ".release-exclude"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


class HeldBack(unittest.TestCase):

    def test_lab15_hidden_clusters_are_here_and_excluded(self):
        found = glob.glob(os.path.join(ROOT, "grader", "labs", "_lab15_hidden", "*.json"))
        self.assertGreaterEqual(len(found), 5, "lab15's held-back clusters are missing")
        self.assertIn("grader/labs/_lab15_hidden", excluded())

    def test_release_leaves_them_out(self):
        if shutil.which("git") is None:
            self.skipTest("needs git")
        tmp = tempfile.mkdtemp(prefix="commlab-heldback-")
        self.addCleanup(shutil.rmtree, tmp, True)
        out = os.path.join(tmp, "release")
        r = subprocess.run([os.path.join(ROOT, "scripts", "student_release.sh"), out], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for spec in excluded():
            self.assertFalse(os.path.exists(os.path.join(out, spec)), f"{spec} was shipped")
        # Nor under another name: no shipped file has a held-back cluster's content.
        hidden = set()
        for f in glob.glob(os.path.join(ROOT, "grader", "labs", "_lab15_hidden", "*")):
            with open(f, "rb") as fh:
                hidden.add(fh.read())
        for dirpath, _, files in os.walk(out):
            for name in files:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    self.assertNotIn(fh.read(), hidden, os.path.join(dirpath, name))
        # What grading lab15 needs is shipped: its spec, its model and the examples.
        for must in ("grader/labs/lab15.py", "grader/labs/_lab15_model.py",
                     "datasets/lab15/examples/healthy-2x2.txt", "labs/lab15/lab15.c"):
            self.assertTrue(os.path.exists(os.path.join(out, must)), must)


if __name__ == "__main__":
    unittest.main()
