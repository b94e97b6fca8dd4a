"""Lab specs: registration, validation, selection, run order and the expect helpers."""

import math
import unittest

from tests.grader import helpers  # noqa: F401
from gradelib import CheckFailed, Lab, SpecError, expect, expect_close, expect_match, \
    expect_range
from gradelib.select import UnknownFilter, run_order, select


def noop(ctx, *rest):
    return None


def sample_lab():
    lab = Lab("t", title="T", program="t")
    lab.check("cpu.sweep", "sweep", points=0)(noop)
    lab.check("cpu.fit", "fit", points=10, parent="cpu.sweep")(noop)
    lab.check("cpu.other", "other", points=2)(noop)
    lab.check("cpu.perf", "perf", points=5, kind="performance")(noop)
    lab.check("gpu.probe", "probe", points=5, backend="gpu", needs={"gpus": 2})(noop)
    lab.validate()
    return lab


class SpecTest(unittest.TestCase):
    def test_defaults(self):
        lab = sample_lab()
        c = lab.get("cpu.other")
        self.assertEqual((c.backend, c.timeout, c.kind, c.parent, c.needs),
                         ("cpu", 60, "correctness", None, {}))
        self.assertEqual(Lab("lab07").program, "lab07")

    def test_duplicate_id_rejected(self):
        lab = Lab("t")
        lab.check("a", "A")(noop)
        with self.assertRaisesRegex(SpecError, "duplicate check id 'a'"):
            lab.check("a", "again")(noop)

    def test_bad_fields_rejected(self):
        for kw in ({"backend": "tpu"}, {"kind": "speed"}, {"points": -1}, {"timeout": 0},
                   {"needs": {"fpgas": 1}}):
            with self.assertRaises(SpecError, msg=str(kw)):
                Lab("t").check("a", "A", **kw)(noop)
        with self.assertRaises(SpecError):
            Lab("t").check("bad id", "A")(noop)

    def test_unknown_parent_and_cycle(self):
        lab = Lab("t")
        lab.check("a", "A", parent="zz")(noop)
        with self.assertRaisesRegex(SpecError, "unknown parent"):
            lab.validate()
        lab = Lab("t")
        lab.check("p", "P", kind="performance")(noop)
        lab.check("c", "C", parent="p")(noop)
        with self.assertRaisesRegex(SpecError, "cycle"):
            lab.validate()

    def test_timed_needs_a_performance_child(self):
        lab = Lab("t")
        lab.check("run", "R", timed=True)(noop)
        lab.check("ok", "O", parent="run")(noop)
        with self.assertRaisesRegex(SpecError, "timed but no performance check"):
            lab.validate()
        lab.check("perf", "P", kind="performance", parent="run")(noop)
        lab.validate()
        self.assertTrue(lab.get("run").timed)
        self.assertFalse(lab.get("ok").timed)

    def test_select_by_prefix_and_glob(self):
        lab = sample_lab()
        self.assertEqual(select(lab, []), [c.id for c in lab.checks])
        self.assertEqual(select(lab, ["cpu.f"]), ["cpu.fit"])
        self.assertEqual(select(lab, ["*.p*"]), ["cpu.perf", "gpu.probe"])
        with self.assertRaises(UnknownFilter):
            select(lab, ["cpu.zzz"])

    def test_run_order_adds_dependencies(self):
        lab = sample_lab()
        self.assertEqual([c.id for c in run_order(lab, {"cpu.fit"})], ["cpu.sweep", "cpu.fit"])
        self.assertEqual([c.id for c in run_order(lab, {"cpu.perf"})],
                         ["cpu.sweep", "cpu.fit", "cpu.other", "cpu.perf"])


class ExpectTest(unittest.TestCase):
    def test_expect(self):
        expect("x", 3, 3)
        expect("flag", True)
        with self.assertRaises(CheckFailed) as cm:
            expect("ranks", 3, 4)
        self.assertEqual((cm.exception.expected, cm.exception.found), ("4", "3"))

    def test_expect_close(self):
        expect_close("a", 1.05, 1.0, rel=0.1)
        expect_close("a", 1.0 + 1e-9, 1.0)
        with self.assertRaises(CheckFailed) as cm:
            expect_close("alpha (us)", 2.3, 1.5, rel=0.10)
        text = cm.exception.render()
        self.assertIn("alpha (us)", text)
        self.assertIn("expected: 1.5 ± 10%", text)
        self.assertIn("found:    2.3", text)
        for bad in (math.nan, math.inf, None, "1.0"):
            with self.assertRaises(CheckFailed):
                expect_close("a", bad, 1.0, rel=0.5)

    def test_expect_range_and_match(self):
        expect_range("x", 5, 1, 10)
        with self.assertRaises(CheckFailed):
            expect_range("x", 11, high=10)
        self.assertEqual(expect_match("m", "a\nrank 3 ok\n", r"rank (\d) ok").group(1), "3")
        with self.assertRaises(CheckFailed) as cm:
            expect_match("m", "one\ntwo\n", r"^three$")
        self.assertIn("two", cm.exception.render())


if __name__ == "__main__":
    unittest.main()
