"""Every lab's reference under AddressSanitizer and UndefinedBehaviorSanitizer
(`make san-test`): every correctness check passes and no sanitizer reports.

Performance checks are not run here: instrumented code runs several times slower
than the uninstrumented MPI or memcpy baselines it is compared with, so those ratios
say nothing. The uninstrumented suite (test_labs.py) scores them.

The suite asks whether every code path is memory-safe, so it runs each path once rather
than on every machine a decision is scored on: of a family of decision checks (ids that
differ only in their last part, such as sim.incast.25g and sim.incast.100g) the first
stands for the family, and a decision check's search tries a thinned grid
(ctx.sanitizer_subset in gradelib/context.py). Every correctness check runs."""

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
    """The reference's every check but the performance ones, one per family."""
    return grade(lab, "--solution", *sanitized_checks(load_lab(ROOT, lab).checks))


def sanitized_checks(checks):
    """The ids of checks to run under the sanitizers: no performance check, and only the
    first of each family of decision checks (a.b.x, a.b.y: the same search on another
    machine)."""
    ids, families = [], set()
    for c in checks:
        parts = c.id.split(".")
        family = ".".join(parts[:2]) if len(parts) > 2 and c.kind == "decision" else None
        if c.kind == "performance" or family in families:
            continue
        if family:
            families.add(family)
        ids.append(c.id)
    return ids


if __name__ == "__main__":
    unittest.main()
