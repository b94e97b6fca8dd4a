"""Every lab's reference under AddressSanitizer and UndefinedBehaviorSanitizer
(`make san-test`): every correctness check passes and no sanitizer reports.

Performance checks are not run here: instrumented code runs several times slower
than the uninstrumented MPI or memcpy baselines it is compared with, so those ratios
say nothing. The uninstrumented suite (test_labs.py) scores them."""

import os
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor

from tests.labs.test_labs import ROOT, grade, labs_with_solutions

sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib.spec import load_lab  # noqa: E402

# Checks whose subject the sanitizer runtime itself changes, with the reason.
EXEMPT = {
    ("lab12", "cpu.pipe"): "AddressSanitizer makes mlock a no-op, so no memory shows as locked",
    ("lab09", "cpu.race"): "its ThreadSanitizer build cannot be combined with AddressSanitizer",
    ("lab23", "cpu.memory"): "AddressSanitizer's allocator grows the program's own memory",
}


class SanitizedReference(unittest.TestCase):
    def test_reference_correct_under_sanitizers(self):
        os.environ["COMMLAB_GRADE_SAN"] = "1"
        os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=0")
        os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        # Two labs at a time, as in test_labs.py: the admission queue keeps them fair.
        with ThreadPoolExecutor(max_workers=2) as pool:
            for lab, (_, res, log) in zip(labs_with_solutions(),
                                          pool.map(grade_correctness, labs_with_solutions())):
                with self.subTest(lab=lab):
                    failed = [t["id"] for t in res["tests"] if t["status"] == "failed"
                              and (lab, t["id"]) not in EXEMPT]
                    self.assertEqual(failed, [], f"{lab} under sanitizers:\n{log}")
                    self.assertNotIn("ERROR: AddressSanitizer", log)
                    self.assertNotIn("runtime error:", log)


def grade_correctness(lab):
    """The reference's every check but the performance ones."""
    checks = [c.id for c in load_lab(ROOT, lab).checks if c.kind != "performance"]
    return grade(lab, "--solution", *checks)


if __name__ == "__main__":
    unittest.main()
