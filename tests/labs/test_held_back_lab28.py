"""lab28's held-back jobs (grader/labs/lab28_hidden) are in the course tree, listed in
.release-exclude, and reach the student release neither by name nor by content."""

import glob
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HIDDEN = os.path.join(ROOT, "grader", "labs", "lab28_hidden")


class Lab28HeldBack(unittest.TestCase):

    def test_hidden_jobs_are_here_and_excluded(self):
        self.assertGreaterEqual(len(glob.glob(os.path.join(HIDDEN, "*.txt"))), 8)
        with open(os.path.join(ROOT, ".release-exclude"), encoding="utf-8") as f:
            self.assertIn("grader/labs/lab28_hidden", [ln.strip() for ln in f])

    def test_release_leaves_them_out(self):
        if shutil.which("git") is None:
            self.skipTest("needs git")
        tmp = tempfile.mkdtemp(prefix="commlab-lab28-")
        self.addCleanup(shutil.rmtree, tmp, True)
        out = os.path.join(tmp, "release")
        r = subprocess.run([os.path.join(ROOT, "scripts", "student_release.sh"), out], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "grader", "labs", "lab28_hidden")))
        hidden = set()
        for f in glob.glob(os.path.join(HIDDEN, "*.txt")):  # the bundles (a .faults may be empty)
            with open(f, "rb") as fh:
                hidden.add(fh.read())
        for dirpath, _, files in os.walk(out):
            for name in files:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    self.assertNotIn(fh.read(), hidden, os.path.join(dirpath, name))
        # What grading lab28 needs is shipped: its spec, its model and the examples.
        for must in ("grader/labs/lab28.py", "grader/labs/_lab28_model.py",
                     "datasets/lab28/examples/healthy-dgx-2node.txt", "labs/lab28/lab28.c"):
            self.assertTrue(os.path.exists(os.path.join(out, must)), must)


if __name__ == "__main__":
    unittest.main()
