"""The sandbox of a check's commands: environment, private TMPDIR, limits, escaped
processes, the jail, and the static integrity scan."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

from tests.grader.helpers import live_processes_with  # noqa: F401 (puts grader on the path)
from gradelib import integrity, runner, sandbox


class SandboxTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="commlab-sandbox-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.limits = sandbox.Limits(max_procs=50)

    def run_cmd(self, script, timeout=20, limits=None, env=None):
        return runner.run(["sh", "-c", script], cwd=self.work, workdir=self.work,
                          timeout=timeout, limits=limits or self.limits, env=env)

    def test_environment_is_scrubbed(self):
        os.environ["COMMLAB_TEST_SECRET"] = "s3cret"
        os.environ["LD_PRELOAD"] = "/nonexistent.so"
        try:
            res = self.run_cmd("env")
        finally:
            del os.environ["COMMLAB_TEST_SECRET"], os.environ["LD_PRELOAD"]
        self.assertNotIn("s3cret", res.stdout)
        self.assertNotIn("LD_PRELOAD", res.stdout)
        self.assertIn("PATH=", res.stdout)

    def test_private_tmpdir_is_removed(self):
        res = self.run_cmd('echo "$TMPDIR"; touch "$TMPDIR/left"; test -w "$HOME"')
        tmp = res.stdout.strip()
        self.assertTrue(tmp.startswith(sandbox.run_dir()), tmp)
        self.assertEqual(res.rc, 0)
        self.assertFalse(os.path.exists(tmp))

    def test_escaped_process_is_killed(self):
        marker = "417.2291"
        res = self.run_cmd(f"setsid sh -c 'sleep {marker}' & sleep 0.3; exit 0")
        self.assertEqual(res.rc, 0)
        time.sleep(0.2)
        self.assertEqual(live_processes_with(marker), [])

    def test_fork_storm_is_stopped(self):
        marker = "418.3391"
        t0 = time.monotonic()
        res = self.run_cmd(f"for i in $(seq 200); do sleep {marker} & done; wait", timeout=30)
        self.assertTrue(res.proc_limit)
        self.assertFalse(res.ok)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(live_processes_with(marker), [])

    def test_file_size_limit_is_the_output_cap(self):
        lim = sandbox.Limits(fsize=1 << 20)
        res = runner.run(["head", "-c", "5000000", "/dev/zero"], cwd=self.work,
                         workdir=self.work, timeout=20, limits=lim)
        self.assertTrue(res.output_limit)
        self.assertFalse(res.crashed)

    def test_memory_limit(self):
        lim = sandbox.Limits(mem_mb=64)
        res = runner.run(["/usr/bin/python3", "-c", "x = bytearray(200 << 20)"], cwd=self.work,
                         workdir=self.work, timeout=20, limits=lim)
        self.assertNotEqual(res.rc, 0)
        self.assertIn("MemoryError", res.stderr)

    @unittest.skipUnless(sandbox.jail_available(), "no mount namespaces here")
    def test_jail_hides_and_protects(self):
        root = os.path.join(self.work, "root")
        os.makedirs(os.path.join(root, "solutions"))
        os.makedirs(os.path.join(root, "out"))
        with open(os.path.join(root, "solutions", "answer"), "w") as f:
            f.write("42")
        lim = sandbox.Limits(jail_root=root, jail_hide=sandbox.hidden_dirs(root))
        res = runner.run(["sh", "-c", "cat solutions/answer; echo x > spec.py; echo ok > out/r"],
                         cwd=root, workdir=os.path.join(root, "out"), timeout=20, limits=lim)
        self.assertNotIn("42", res.stdout)
        self.assertFalse(os.path.exists(os.path.join(root, "spec.py")))
        with open(os.path.join(root, "out", "r")) as f:
            self.assertEqual(f.read(), "ok\n")


@unittest.skipUnless(shutil.which("gcc") and shutil.which("nm"), "needs gcc and binutils")
class IntegrityTest(unittest.TestCase):
    def scan(self, source):
        work = tempfile.mkdtemp(prefix="commlab-integrity-")
        self.addCleanup(shutil.rmtree, work, True)
        src = os.path.join(work, "lab99.c")
        with open(src, "w") as f:
            f.write(source)
        prog = os.path.join(work, "lab99")      # the student's object: lab99-student.o
        subprocess.run(["gcc", "-c", "-o", prog + "-student.o", src], check=True)
        return integrity.scan(prog, work)

    def test_clean_file(self):
        self.assertEqual(self.scan("static int helper(int x) { return x; }\n"
                                   "int lab99_f(int x) { return helper(x) + 1; }\n"), [])

    def test_denied_calls(self):
        text = "\n".join(self.scan(
            "#include <dlfcn.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
            "int lab99_f(void) { return dlsym(0, \"x\") != 0 && system(\"true\")"
            " && fopen(\"f\", \"r\"); }\n"))
        for word in ("dlsym", "system", "fopen"):
            self.assertIn(word, text)

    def test_versions_are_stripped(self):
        self.assertEqual(integrity.normalize("dlsym@GLIBC_2.34"), "dlsym")
        self.assertEqual(integrity.normalize("clock_gettime@@GLIBC_2.17"), "clock_gettime")
        self.assertEqual(integrity.normalize("cl_send"), "cl_send")


if __name__ == "__main__":
    unittest.main()
