"""Backend detection, needs, and the dependency check (with stand-in commands)."""

import io
import os
import subprocess
import tempfile
import unittest

from tests.grader import helpers  # noqa: F401
from gradelib import backends, deps
from gradelib.backends import Backend, Detector, parse_override, unmet_need


class BackendsTest(unittest.TestCase):
    def test_override_parsing(self):
        got = parse_override("cpu,sim,gpu=2")
        self.assertTrue(got["cpu"].available and got["sim"].available)
        self.assertEqual((got["gpu"].available, got["gpu"].count), (True, 2))
        self.assertFalse(got["nic"].available)
        self.assertFalse(parse_override("gpu=0")["gpu"].available)
        with self.assertRaises(ValueError):
            parse_override("cpu,tpu")

    def test_unmet_gpu_need_message(self):
        det = Detector({"gpu": Backend("gpu", False, "cudaErrorInsufficientDriver", 0)})
        self.assertEqual(unmet_need({"gpus": 2}, det),
                         "needs 2 GPUs (found 0: cudaErrorInsufficientDriver)")
        det = Detector({"gpu": Backend("gpu", True, "", 2)})
        self.assertIsNone(unmet_need({"gpus": 2, "ranks": 64}, det))
        self.assertIn("no-such-command-x",
                      unmet_need({"commands": ["sh", "no-such-command-x"]}, det))

    def test_nic_detection_from_sysfs(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertFalse(backends.detect_nic(d).available)
            os.mkdir(os.path.join(d, "mlx5_0"))
            b = backends.detect_nic(d)
            self.assertEqual((b.available, b.count), (True, 1))
        self.assertFalse(backends.detect_nic("/nonexistent/infiniband").available)

    def test_sim_always_and_gpu_reason(self):
        self.assertTrue(backends.detect_sim().available)
        gpu = backends.detect_gpu()
        if not gpu.available:
            self.assertTrue(gpu.reason)


def fake_dpkg(installed):
    def run(argv, **kw):
        lines = [f"{p} install ok installed" for p in argv[3:] if p in installed]
        return subprocess.CompletedProcess(argv, 0 if len(lines) == len(argv) - 3 else 1,
                                           "\n".join(lines) + "\n", "")
    return run


class DepsTest(unittest.TestCase):
    def test_missing_packages(self):
        run = fake_dpkg(set(deps.PACKAGES) - {"hwloc", "gnuplot-nox"})
        self.assertEqual(deps.missing_packages(run=run), ["hwloc", "gnuplot-nox"])

    def test_non_root_gets_sudo_line(self):
        run = fake_dpkg(set(deps.PACKAGES) - {"hwloc"})
        with self.assertRaises(deps.DepsError) as cm:
            deps.ensure(io.StringIO(), is_root=False, which=lambda c: "/usr/bin/" + c, run=run)
        self.assertIn("sudo apt-get install -y hwloc", str(cm.exception))

    def test_root_installs(self):
        calls = []

        def run(argv, **kw):
            if argv[0] == "dpkg-query":
                return fake_dpkg(set(deps.PACKAGES) - {"hwloc"})(argv)
            calls.append(argv)
            return subprocess.CompletedProcess(argv, 0)
        out = io.StringIO()
        self.assertEqual(deps.ensure(out, is_root=True, which=lambda c: c, run=run), ["hwloc"])
        self.assertIn("apt-get install -y hwloc", calls[0][-1])
        self.assertIn("DEBIAN_FRONTEND=noninteractive", calls[0][-1])

    def test_without_dpkg_checks_commands(self):
        have = {"make", "gcc"}
        with self.assertRaises(deps.DepsError) as cm:
            deps.ensure(io.StringIO(), is_root=False,
                        which=lambda c: c if c in have else None)
        self.assertIn("mpicc", str(cm.exception))
        out = io.StringIO()
        have |= {"mpicc", "mpirun"}
        deps.ensure(out, is_root=False, which=lambda c: c if c in have else None)
        self.assertIn("gnuplot", out.getvalue())


if __name__ == "__main__":
    unittest.main()
