"""test_cli.py: `commlab sim` refuses bad input with a one-line reason and runs the audit's repro.

Run: /usr/bin/python3 -m unittest tests.sim.test_cli (after `make cli`).
"""
import json
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "bin", "commlab")


def sim(*args, timeout=20):
    return subprocess.run([BIN, "sim", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@unittest.skipUnless(os.path.exists(BIN), "build/bin/commlab is not built (make cli)")
class BadInput(unittest.TestCase):
    def refused(self, *args, says):
        r = sim("--system", "dgx-h100", "--coll", "allreduce", *args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(says, lines[0])

    def test_infinite_size(self):
        self.refused("--size", "inf", says="--size")

    def test_fractional_bytes(self):
        self.refused("--size", "1.5", says="--size")

    def test_fractional_kib_is_whole_bytes(self):
        r = sim("--system", "dgx-h100", "--coll", "allreduce", "--size", "1.5K", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["size"], 1536)

    def test_nan_nic(self):
        self.refused("--size", "1M", "--nic-gbps", "nan", says="--nic-gbps")

    def test_huge_machine_refused_at_once(self):
        self.refused("--size", "1M", "--nodes", "1000000", says="--nodes")

    def test_oversubscription_below_one(self):
        self.refused("--size", "1M", "--oversubscription", "0.5", says="--oversubscription")


@unittest.skipUnless(os.path.exists(BIN), "build/bin/commlab is not built (make cli)")
class Repro(unittest.TestCase):
    def test_alltoall_default_routing(self):
        """64 DGX H100, 1 GiB AlltoAll: about one NIC's 48 GB/s with D-mod-K."""
        r = sim("--system", "dgx-h100", "--nodes", "64", "--coll", "alltoall", "--size", "1G",
                "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(json.loads(r.stdout)["busbw"], 46)

    def test_topo_file(self):
        r = sim("--topo", "datasets/topologies/hgx-h200.topo.txt", "--nodes", "2", "--coll",
                "allreduce", "--size", "1G", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual(d["system"], "dgx-h100")
        self.assertEqual(d["nranks"], 16)

    def test_system_file_path(self):
        r = sim("--system", "datasets/systems/dgx-a100.conf", "--coll", "allreduce", "--size",
                "8", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()
