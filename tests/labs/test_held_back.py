"""Held-back grading material (.release-exclude) exists in the course tree and never reaches
the student release: lab15's hidden clusters are graded officially, never shipped."""

import glob
import os
import unittest

from tests.labs.held_back import (ROOT, assert_content_not_shipped, assert_shipped, excluded,
                                  release)


class HeldBack(unittest.TestCase):

    def test_lab15_hidden_clusters_are_here_and_excluded(self):
        found = glob.glob(os.path.join(ROOT, "grader", "labs", "_lab15_hidden", "*.json"))
        self.assertGreaterEqual(len(found), 5, "lab15's held-back clusters are missing")
        self.assertIn("grader/labs/_lab15_hidden", excluded())

    def test_release_leaves_them_out(self):
        out = release(self, "commlab-heldback-")
        for spec in excluded():
            self.assertFalse(os.path.exists(os.path.join(out, spec)), f"{spec} was shipped")
        # Nor under another name: no shipped file has a held-back cluster's content.
        assert_content_not_shipped(self, out, "grader/labs/_lab15_hidden/*")
        # What grading lab15 needs is shipped: its spec, its model and the examples.
        assert_shipped(self, out, ("grader/labs/lab15.py", "grader/labs/_lab15_model.py",
                                   "datasets/lab15/examples/healthy-2x2.txt", "labs/lab15/lab15.c"))


if __name__ == "__main__":
    unittest.main()
