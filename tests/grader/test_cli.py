"""End to end: ./grade on the fixture labs (verdicts, gating, JSON, exit codes, filters)."""

import os
import re
import unittest

from tests.grader.helpers import HAVE_MPI, grade, grade_json, live_processes_with, make_root

SUMMARY = re.compile(r"^\d+ passed, \d+ failed, \d+ skipped$")


class VerdictsLabTest(unittest.TestCase):
    """Grades the whole 'verdicts' lab once and checks each check's outcome."""

    @classmethod
    def setUpClass(cls):
        cls.root = make_root(cls.addClassCleanup)
        cls.res, cls.data, cls.tests = grade_json(cls.root, "verdicts")

    def verdict(self, cid):
        return self.tests[cid]["verdict"]

    def test_exit_code_and_summary(self):
        self.assertEqual(self.res.returncode, 1, self.res.stderr)
        last = self.res.stdout.rstrip("\n").splitlines()[-1]
        self.assertRegex(last, SUMMARY)
        passed = sum(t["score"] for t in self.data["tests"] if t["verdict"] == "PASS")
        self.assertEqual(self.data["score"], passed)
        self.assertIn(f"Score: {passed:g}/{self.data['max_score']:g}\n", self.res.stdout)

    def test_pass_and_parent_value(self):
        self.assertEqual(self.verdict("pass.run"), "PASS")
        self.assertEqual(self.verdict("pass.child"), "PASS")
        self.assertEqual(self.tests["pass.child"]["score"], 3)

    def test_fail_messages(self):
        t = self.tests["fail.exit"]
        self.assertEqual((t["verdict"], t["status"], t["score"]), ("FAIL", "failed", 0))
        self.assertIn("exit status 3", t["output"])
        self.assertIn("cannot open topology file", t["output"])
        self.assertIn("reproduce (from the repo root): build/labs/verdicts/verdicts fail",
                      t["output"])
        t = self.tests["fail.expect"]
        self.assertIn("expected: 1.5 ± 10%", t["output"])
        self.assertIn("found:    2.3", t["output"])
        self.assertEqual(self.verdict("fail.nocheck"), "PASS")
        self.assertEqual(self.verdict("error.spec"), "FAIL")
        self.assertIn("KeyError", self.tests["error.spec"]["output"])

    def test_child_of_failed_parent_fails_not_skips(self):
        t = self.tests["fail.child"]
        self.assertEqual(t["verdict"], "FAIL")
        self.assertIn("not run: parent fail.exit failed", t["output"])

    def test_timeouts_leave_no_process(self):
        self.assertEqual(self.verdict("timeout.sleep"), "TIMEOUT")
        self.assertEqual(self.verdict("timeout.python"), "TIMEOUT")
        self.assertLess(self.tests["timeout.sleep"]["elapsed"], 4.5)
        self.assertEqual(live_processes_with("987.654"), [])

    def test_spawned_and_short_timeout_processes_gone(self):
        self.assertEqual(self.verdict("spawn.bg"), "PASS", self.tests["spawn.bg"]["output"])
        self.assertEqual(live_processes_with("986.54"), [])

    def test_crash(self):
        self.assertEqual(self.verdict("crash.segv"), "CRASH")
        self.assertIn("SIGSEGV", self.tests["crash.segv"]["output"])

    @unittest.skipUnless(HAVE_MPI, "mpirun/mpicc not installed")
    def test_crash_under_mpirun(self):
        t = self.tests["crash.mpi"]
        self.assertEqual(t["verdict"], "CRASH", t["output"])
        self.assertIn("OMPI_ALLOW_RUN_AS_ROOT=1", t["output"])
        self.assertIn("mpirun -np 2 build/labs/verdicts/verdicts crash", t["output"])

    def test_flood_passes(self):
        self.assertEqual(self.verdict("flood.out"), "PASS", self.tests["flood.out"]["output"])

    def test_skips(self):
        t = self.tests["skip.gpu"]
        self.assertEqual((t["verdict"], t["status"], t["score"], t["max_score"]),
                         ("SKIP", "skipped", 0, 0))
        self.assertIn("needs 2 GPUs (found 0", t["output"])
        self.assertEqual(self.verdict("skip.self"), "SKIP")
        line = [l for l in self.res.stdout.splitlines() if l.startswith("Skipped")][0]
        self.assertIn("skip.gpu (5 pts): needs 2 GPUs", line)
        # skipped checks do not count in max_score
        expected_max = sum(t["points"] for t in self.data["tests"] if t["status"] != "skipped")
        self.assertEqual(self.data["max_score"], expected_max)

    def test_json_fields(self):
        for key in ("lab", "score", "max_score", "backends", "tests"):
            self.assertIn(key, self.data)
        self.assertEqual(self.data["lab"], "verdicts")
        self.assertIn("sim", self.data["backends"])
        self.assertNotIn("gpu", self.data["backends"])
        for t in self.data["tests"]:
            for key in ("id", "name", "score", "max_score", "status", "output", "metrics",
                        "verdict"):
                self.assertIn(key, t)
            self.assertIn(t["status"], ("passed", "failed", "skipped"))

    def test_logs_kept_only_for_failures(self):
        d = os.path.join(self.root, "build", "grade", "verdicts")
        self.assertTrue(os.path.isfile(os.path.join(d, "fail.exit.log")))
        self.assertFalse(os.path.exists(os.path.join(d, "pass.child.log")))
        self.assertFalse(os.path.exists(os.path.join(d, "pass.run")))
        self.assertTrue(os.path.isfile(os.path.join(d, "fail.expect", "r.json")))

    def test_plot(self):
        png = os.path.join(self.root, "build", "grade", "verdicts", "sweep.png")
        if os.path.exists("/usr/bin/gnuplot"):
            self.assertTrue(os.path.isfile(png))
            self.assertIn("plot: build/grade/verdicts/sweep.png", self.res.stdout)

    def test_progress_lines(self):
        self.assertRegex(self.res.stderr, r"\[ ?1/\d+\] pass\.run \.+ PASS 0/0 \(\d+\.\d s\)")
        self.assertRegex(self.res.stderr, r"fail\.exit \.+ FAIL 0/2")


class CliTest(unittest.TestCase):
    def setUp(self):
        self.root = make_root(self.addCleanup)

    def test_example_full_marks(self):
        res, data, tests = grade_json(self.root, "example")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertEqual((data["score"], data["max_score"]), (10, 10))
        self.assertEqual(res.stdout.splitlines()[-1], "3 passed, 0 failed, 0 skipped")

    def test_filter_runs_parent_but_scores_only_selection(self):
        res, data, tests = grade_json(self.root, "verdicts", "pass.child")
        self.assertEqual(res.returncode, 0, res.stdout)
        self.assertEqual(list(tests), ["pass.child"])
        self.assertIn("not scored", res.stdout)

    def test_glob_filter(self):
        res, data, tests = grade_json(self.root, "verdicts", "fail.e*", "crash.s")
        self.assertEqual(sorted(tests), ["crash.segv", "fail.exit", "fail.expect"])
        self.assertEqual(res.returncode, 1)

    def test_correctness_gates_performance(self):
        res, data, tests = grade_json(self.root, "gating", env={"FAKE_WRONG": "1"})
        t = tests["sim.perf"]
        self.assertEqual(t["verdict"], "FAIL")
        self.assertIn("not run: correctness checks failed: sim.answer", t["output"])

    def test_perf_partial_points(self):
        res, data, tests = grade_json(self.root, "gating", env={"FAKE_SPEED": "8.5"})
        t = tests["sim.perf"]
        self.assertEqual((t["score"], t["max_score"]), (3.0, 6))
        self.assertEqual(t["metrics"]["ratio"], 0.85)
        for key in ("value", "baseline", "ratio", "unit"):
            self.assertIn(key, t["metrics"])
        self.assertIn("ratio 0.85 (>= 0.90 full, <= 0.80 none)", res.stdout)
        self.assertEqual(res.returncode, 1)

    def test_perf_full_points_exit_zero(self):
        res, data, tests = grade_json(self.root, "gating", "sim.perf",
                                      env={"FAKE_SPEED": "9.5"})
        self.assertEqual(tests["sim.perf"]["score"], 6)
        self.assertEqual(list(tests), ["sim.perf"])
        self.assertEqual(res.returncode, 0, res.stdout)

    def test_build_error(self):
        res, data, tests = grade_json(self.root, "broken")
        self.assertEqual(res.returncode, 1)
        self.assertEqual({t["verdict"] for t in data["tests"]}, {"BUILD-ERROR"})
        self.assertIn("error: expected ';' before 'return'", res.stdout)
        self.assertEqual(data["max_score"], 5)

    def test_backend_restriction_skips(self):
        res, data, tests = grade_json(self.root, "gating", "--backend", "sim")
        self.assertEqual(tests["sim.other"]["verdict"], "SKIP")
        self.assertIn("not selected", tests["sim.other"]["output"])
        self.assertEqual(res.returncode, 0, res.stdout)

    def test_solution_and_source_builds(self):
        res = grade(self.root, "example", "--solution")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.root, "build/solutions/example/example")))
        res = grade(self.root, "example", "--source", os.path.join(self.root, "student"))
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("STUDENT_DIR=student LAB_OUT=build/grade/example/_build", res.stderr)
        built = os.path.join(self.root, "build/grade/example/_build/example")
        self.assertTrue(os.path.isfile(built))

    def test_list(self):
        res = grade(self.root, "verdicts", "--list", "skip")
        self.assertEqual(res.returncode, 0)
        self.assertIn("skip.gpu", res.stdout)
        self.assertIn("gpu", res.stdout)
        self.assertIn("Needs two GPUs", res.stdout)
        self.assertNotIn("fail.exit", res.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.root, "build")))

    def test_usage_errors_exit_2(self):
        for args in (["nolab"], ["example", "nosuchcheck"], ["dupid"], [],
                     ["example", "--backend", "tpu"], ["example", "--bogus"]):
            res = grade(self.root, *args)
            self.assertEqual(res.returncode, 2, (args, res.stdout, res.stderr))
        self.assertIn("duplicate check id", grade(self.root, "dupid").stderr)

    def test_stale_log_removed_when_check_passes(self):
        grade(self.root, "gating", "sim.answer", env={"FAKE_WRONG": "1"})
        log = os.path.join(self.root, "build/grade/gating/sim.answer.log")
        self.assertTrue(os.path.isfile(log))
        grade(self.root, "gating", "sim.answer")
        self.assertFalse(os.path.exists(log))


if __name__ == "__main__":
    unittest.main()
