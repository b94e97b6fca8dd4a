"""Every lab's reference under AddressSanitizer and UndefinedBehaviorSanitizer
(`make san-test`): every correctness check passes and no sanitizer reports.

Performance checks are not asserted here: instrumented code runs several times
slower than the uninstrumented MPI or memcpy baselines it is compared with, so
those ratios say nothing. The uninstrumented suite (test_labs.py) scores them."""

import os
import unittest

from tests.labs.test_labs import grade, labs_with_solutions

# Checks whose subject the sanitizer runtime itself changes, with the reason.
EXEMPT = {
    ("lab12", "cpu.pipe"): "AddressSanitizer makes mlock a no-op, so no memory shows as locked",
}


class SanitizedReference(unittest.TestCase):
    def test_reference_correct_under_sanitizers(self):
        os.environ["COMMLAB_GRADE_SAN"] = "1"
        os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=0")
        os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        for lab in labs_with_solutions():
            with self.subTest(lab=lab):
                _, res, log = grade(lab, "--solution")
                # performance checks: those with a ratio, and those gated before measuring
                perf = {t["id"] for t in res["tests"] if "ratio" in t.get("metrics", {})
                        or t.get("output", "").startswith("not run: correctness checks failed")}
                failed = [t["id"] for t in res["tests"]
                          if t["status"] == "failed" and t["id"] not in perf
                          and (lab, t["id"]) not in EXEMPT]
                self.assertEqual(failed, [], f"{lab} under sanitizers:\n{log}")
                self.assertNotIn("ERROR: AddressSanitizer", log)
                self.assertNotIn("runtime error:", log)


if __name__ == "__main__":
    unittest.main()
