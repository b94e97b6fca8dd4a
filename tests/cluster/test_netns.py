"""The net backend: namespace nodes with tbf links, MPI across them without ssh, teardown."""

import fcntl
import os
import signal
import subprocess
import time
import unittest

from tests.cluster import helpers as h


class NetNodes(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        h.require_root(cls)

    def tearDown(self):
        subprocess.run([h.NETNS_SH, "cleanup"], capture_output=True, timeout=60)

    def test_up_rails_and_down(self):
        tag = f"clnet{os.getpid()}t"
        r = subprocess.run([h.NETNS_SH, "up", "--tag", tag, "--nodes", "3", "--rails", "2",
                            "--rate", "100mbit"], capture_output=True, text=True, timeout=60)
        self.addCleanup(subprocess.run, [h.NETNS_SH, "down", "--tag", tag], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(n for n in h.live_namespaces() if n.startswith(tag)),
                         sorted([tag + "s", tag + "n0", tag + "n1", tag + "n2"]))
        addrs = subprocess.run(["ip", "-n", tag + "n2", "-4", "-o", "addr"], capture_output=True,
                               text=True).stdout
        self.assertIn("10.77.0.3/24", addrs)
        self.assertIn("10.77.1.3/24", addrs)
        qd = subprocess.run(["ip", "netns", "exec", tag + "n1", "tc", "qdisc", "show", "dev",
                             "eth1"], capture_output=True, text=True).stdout
        self.assertIn("tbf", qd)
        self.assertIn("100Mbit", qd)
        node = subprocess.run([h.NETNS_SH, "exec", "--tag", tag, "0", "hostname"],
                              capture_output=True, text=True, timeout=30)
        self.assertEqual(node.stdout.strip(), f"{tag}-node0")
        subprocess.run([h.NETNS_SH, "down", "--tag", tag], timeout=60)
        self.assertEqual([n for n in h.live_namespaces() if n.startswith(tag)], [])
        self.assertFalse(os.path.exists(f"/tmp/commlab-netns/{tag}"))

    def test_sigterm_tears_down(self):
        tag = f"clnet{os.getpid()}k"
        p = subprocess.Popen([h.NETNS_SH, "run", "--tag", tag, "--nodes", "2", "--", "sleep",
                              "60"], start_new_session=True)
        self.addCleanup(subprocess.run, [h.NETNS_SH, "down", "--tag", tag], timeout=60)
        for _ in range(100):
            if tag + "n1" in h.live_namespaces():
                break
            time.sleep(0.1)
        self.assertIn(tag + "n1", h.live_namespaces())
        os.kill(p.pid, signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), 143)
        self.assertEqual([n for n in h.live_namespaces() if n.startswith(tag)], [])

    def test_cleanup_removes_stale_sets(self):
        dead = subprocess.Popen(["true"])
        dead.wait()
        tag = f"clnet{dead.pid}d"
        env = dict(os.environ, COMMLAB_NETNS_OWNER=str(dead.pid))
        r = subprocess.run([h.NETNS_SH, "up", "--tag", tag, "--nodes", "2"], env=env,
                           capture_output=True, text=True, timeout=60)
        self.addCleanup(subprocess.run, [h.NETNS_SH, "down", "--tag", tag], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        subprocess.run([h.NETNS_SH, "cleanup"], capture_output=True, timeout=60)
        self.assertEqual([n for n in h.live_namespaces() if n.startswith(tag)], [])

    def test_grade_net_check_across_two_nodes(self):
        """netdemo: lab01's ping-pong across 2 nodes at 1 Gbit/s, through ./grade."""
        lab01 = h.lab01_binary()
        root = h.make_root(self.addCleanup)
        out = os.path.join(root, "net.json")
        with open(h.PERF_LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = subprocess.run(h.grade_argv(root, "netdemo", "--json", out),
                               env=dict(os.environ, COMMLAB_LAB01_BIN=lab01,
                                        COMMLAB_GRADE_BACKENDS="net"),
                               capture_output=True, text=True, timeout=150)
        t = h.tests_by_id(h.load(out))["net.pingpong"]
        self.assertEqual(t["verdict"], "PASS", r.stdout + r.stderr)
        self.assertLess(t["metrics"]["bandwidth_GBps"], 0.125 * 1.05)
        self.assertEqual([n for n in h.live_namespaces() if n.startswith("clnet")
                          and not n.startswith("clnet" + str(os.getpid()))], [])


if __name__ == "__main__":
    unittest.main()
