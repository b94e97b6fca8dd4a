"""Process groups, time limits, output capture and crash detection in gradelib.runner."""

import os
import tempfile
import time
import unittest

from tests.grader.helpers import FIXTURES, PYTHON, live_processes_with
from gradelib import runner


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.work = self.tmp.name

    def run_cmd(self, argv, **kw):
        return runner.run(argv, cwd=self.work, workdir=self.work, root=self.work, **kw)

    def test_timeout_kills_whole_group(self):
        t0 = time.monotonic()
        res = self.run_cmd(["sh", "-c", "sleep 97.5311 & sleep 97.5312; wait"], timeout=0.5)
        self.assertTrue(res.timed_out)
        self.assertIsNone(res.signal)
        self.assertLess(time.monotonic() - t0, 4.0)
        self.assertEqual(live_processes_with("97.531"), [])

    def test_leftover_child_killed_after_normal_exit(self):
        res = self.run_cmd(["sh", "-c", "sleep 97.5321 & echo started"], timeout=10)
        self.assertEqual(res.rc, 0)
        self.assertIn("started", res.stdout)
        self.assertEqual(live_processes_with("97.5321"), [])

    def test_child_that_ignores_sigterm_gets_sigkill(self):
        script = "trap '' TERM; sleep 97.5331 & trap '' TERM; wait"
        t0 = time.monotonic()
        res = self.run_cmd(["sh", "-c", script], timeout=0.3)
        self.assertTrue(res.timed_out)
        self.assertLess(time.monotonic() - t0, 5.0)
        self.assertEqual(live_processes_with("97.5331"), [])

    def test_100mb_of_output_is_truncated_without_hanging(self):
        prog = os.path.join(FIXTURES, "prog.py")
        t0 = time.monotonic()
        res = self.run_cmd([PYTHON, prog, "flood", str(100 * 1000 * 1000)], timeout=60)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(res.rc, 0)
        self.assertTrue(res.truncated)
        self.assertLessEqual(len(res.stdout), runner.KEEP_BYTES + 100)
        self.assertIn("bytes of output omitted", res.stdout)
        self.assertEqual([f for f in os.listdir(self.work) if f.endswith(".out")], [])

    def test_signal_is_a_crash(self):
        res = self.run_cmd(["sh", "-c", "kill -SEGV $$"], timeout=10)
        self.assertTrue(res.crashed)
        self.assertEqual(res.signal, 11)
        self.assertEqual(res.signal_name, "SIGSEGV")
        self.assertFalse(res.ok)

    def test_mpirun_rank_signal_is_parsed(self):
        text = ("Primary job  terminated normally, but 1 process returned\n"
                "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 "
                "(Segmentation fault).\n")
        res = runner.Result(rc=139, stdout="", stderr=text, command="x", elapsed=0.1)
        runner._find_crash(res)
        self.assertEqual((res.signal, res.rank, res.signal_name), (11, 1, "Segmentation fault"))

    def test_nonzero_exit_is_not_a_crash(self):
        res = self.run_cmd(["sh", "-c", "echo oops >&2; exit 3"], timeout=10)
        self.assertEqual(res.rc, 3)
        self.assertFalse(res.crashed)
        self.assertEqual(res.stderr_tail(), "oops")

    def test_input_and_env(self):
        res = self.run_cmd(["sh", "-c", 'cat; echo "$FOO"'], input="abc\n", env={"FOO": "b r"},
                           timeout=10)
        self.assertEqual(res.stdout, "abc\nb r\n")
        self.assertTrue(res.command.startswith("FOO='b r' sh -c "))
        self.assertIn(" < ", res.command)

    def test_repro_line_is_relative_to_root_and_quoted(self):
        line = runner.repro_line(["/r/build/labs/x/x", "--json", "/r/build/grade/x/a b.json"],
                                 "/r", {"OMPI_ALLOW_RUN_AS_ROOT": "1"})
        self.assertEqual(line, "OMPI_ALLOW_RUN_AS_ROOT=1 build/labs/x/x --json "
                               "'build/grade/x/a b.json'")

    def test_missing_program_raises_oserror(self):
        with self.assertRaises(OSError):
            self.run_cmd([os.path.join(self.work, "no-such-program")], timeout=5)


if __name__ == "__main__":
    unittest.main()
