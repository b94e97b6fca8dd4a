"""lab28's held-back jobs (grader/labs/lab28_hidden) are in the course tree, listed in
.release-exclude, and reach the student release neither by name nor by content."""

import glob
import os
import unittest

from tests.labs.held_back import (ROOT, assert_content_not_shipped, assert_shipped, excluded,
                                  release)

HIDDEN = os.path.join(ROOT, "grader", "labs", "lab28_hidden")


class Lab28HeldBack(unittest.TestCase):

    def test_hidden_jobs_are_here_and_excluded(self):
        self.assertGreaterEqual(len(glob.glob(os.path.join(HIDDEN, "*.txt"))), 8)
        self.assertIn("grader/labs/lab28_hidden", excluded())

    def test_release_leaves_them_out(self):
        out = release(self, "commlab-lab28-")
        self.assertFalse(os.path.exists(os.path.join(out, "grader", "labs", "lab28_hidden")))
        # Nor under another name: no shipped file has a held-back bundle's content (only the
        # bundles are compared: a .faults may be empty).
        assert_content_not_shipped(self, out, "grader/labs/lab28_hidden/*.txt")
        # What grading lab28 needs is shipped: its spec, its model and the examples.
        assert_shipped(self, out, ("grader/labs/lab28.py", "grader/labs/_lab28_model.py",
                                   "datasets/lab28/examples/healthy-dgx-2node.txt",
                                   "labs/lab28/lab28.c"))


if __name__ == "__main__":
    unittest.main()
