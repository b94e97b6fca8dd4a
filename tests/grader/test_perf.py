"""Performance scoring: ramp math, interleaving, medians and recorded metrics."""

import unittest

from tests.grader import helpers  # noqa: F401  (puts gradelib on the path)
from gradelib import CheckFailed, perf_ratio, ramp


class FakeCtx:
    def __init__(self):
        self.metrics, self.perf_fractions, self.perf_messages, self.lines = {}, [], [], []

    def log(self, text):
        self.lines.append(text)


class RampTest(unittest.TestCase):
    def test_ramp_points(self):
        self.assertEqual(ramp(0.70, 0.8, 0.9), 0.0)
        self.assertEqual(ramp(0.80, 0.8, 0.9), 0.0)
        self.assertAlmostEqual(ramp(0.85, 0.8, 0.9), 0.5)
        self.assertAlmostEqual(ramp(0.875, 0.8, 0.9), 0.75)
        self.assertEqual(ramp(0.90, 0.8, 0.9), 1.0)
        self.assertEqual(ramp(1.70, 0.8, 0.9), 1.0)

    def test_degenerate_ramp_is_a_step(self):
        self.assertEqual(ramp(0.89, 0.9, 0.9), 0.0)
        self.assertEqual(ramp(0.90, 0.9, 0.9), 1.0)


class PerfRatioTest(unittest.TestCase):
    def test_interleaved_medians_and_metrics(self):
        calls = []
        s_vals = iter([9.0, 1.0, 8.5, 8.6, 50.0])
        b_vals = iter([10.0, 10.0, 10.0, 10.0, 10.0])

        def student():
            calls.append("s")
            return next(s_vals)

        def baseline():
            calls.append("b")
            return next(b_vals)

        ctx = FakeCtx()
        out = perf_ratio(ctx, student=student, baseline=baseline, repeats=5)
        self.assertEqual(calls, ["b", "s"] * 5)
        self.assertEqual(out["value"], 8.6)           # median of the student samples
        self.assertEqual(out["baseline"], 10.0)
        self.assertAlmostEqual(out["ratio"], 0.86)
        self.assertAlmostEqual(out["fraction"], 0.6)
        for key in ("value", "baseline", "ratio", "unit", "samples", "baseline_samples"):
            self.assertIn(key, ctx.metrics)
        self.assertEqual(ctx.metrics["samples"], [9.0, 1.0, 8.5, 8.6, 50.0])
        self.assertEqual(ctx.perf_fractions, [out["fraction"]])
        self.assertIn("ratio 0.86 (>= 0.90 full, <= 0.80 none)", ctx.perf_messages[0])

    def test_lower_is_better_inverts(self):
        ctx = FakeCtx()
        out = perf_ratio(ctx, student=lambda: 2.0, baseline=lambda: 1.0, repeats=3,
                         higher_is_better=False, unit="us", name="latency")
        self.assertAlmostEqual(out["ratio"], 0.5)
        self.assertEqual(out["fraction"], 0.0)
        self.assertEqual(ctx.metrics["unit"], "us")

    def test_bad_measurement_fails(self):
        for bad in (0.0, -1.0, float("nan"), None, "fast"):
            with self.assertRaises(CheckFailed):
                perf_ratio(FakeCtx(), student=lambda: bad, baseline=lambda: 1.0, repeats=1)


if __name__ == "__main__":
    unittest.main()
