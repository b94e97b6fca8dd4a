"""./grade --cluster and --batch through a real private Slurm: one node with fake GPUs, and two
nodes in network namespaces (sbatch, and srun steps inside an allocation)."""

import csv
import os
import unittest

from tests.cluster import helpers as h


class SingleNode(unittest.TestCase):
    """One slurmd with 2 fake GPUs (gres/gpu on mknod devices)."""

    @classmethod
    def setUpClass(cls):
        h.require_root(cls)
        h.ensure_slurm()
        cls.cluster = h.Cluster(nodes=1, gpus=2)
        cls.addClassCleanup(cls.cluster.stop)
        cls.root = h.make_root(cls.addClassCleanup)
        h.write_conf(cls.root)

    def test_lab01_checks_as_jobs(self):
        """Real lab01 checks graded in jobs; the GPU check is skipped with its reason."""
        root = h.REPO
        out = os.path.join(self.cluster.dir, "lab01.json")
        r = self.cluster.run(h.grade_argv(root, "lab01", "--cluster", "--solution",
                                          "cpu.estimate", "sim.fit", "gpu.sweep",
                                          "--json", out),
                             env={"COMMLAB_CLUSTER_CONF": os.path.join(self.root, "grader",
                                                                       "cluster.conf")})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("squeue:", r.stderr)
        tests = h.tests_by_id(h.load(out))
        self.assertEqual(tests["cpu.estimate"]["verdict"], "PASS")
        self.assertEqual(tests["sim.fit"]["verdict"], "PASS")
        self.assertEqual(tests["gpu.sweep"]["verdict"], "SKIP")
        self.assertIn("needs 2 GPUs", tests["gpu.sweep"]["output"])
        self.assertIn("--gpus-per-node=2", r.stderr)

    def test_infrastructure_failures_are_retried_and_not_scored(self):
        marker = os.path.join(self.cluster.dir, "cancelled-once")
        student = os.path.join(self.root, "students", "nccl")
        os.makedirs(student, exist_ok=True)
        with open(os.path.join(student, "demo.c"), "w") as f:
            f.write("nccl\n")
        out = os.path.join(self.root, "infra.json")
        r = self.cluster.run(h.grade_argv(self.root, "demo", "--cluster", "--source", student,
                                          "--json", out),
                             env={"COMMLAB_TEST_MARKER": marker})
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("retrying once", r.stderr)
        data = h.load(out)
        tests = h.tests_by_id(data)
        # NCCL's network error twice: INFRA-ERROR, out of the maximum, never 0/5.
        self.assertEqual(tests["cpu.answer"]["verdict"], "INFRA-ERROR")
        self.assertEqual(tests["cpu.answer"]["status"], "skipped")
        self.assertIn("NCCL remote/network error", tests["cpu.answer"]["output"])
        # The job cancelled on the first try passes on the retry.
        self.assertTrue(os.path.exists(marker))
        self.assertEqual(tests["sim.cancel"]["verdict"], "PASS", tests["sim.cancel"]["output"])
        self.assertEqual(tests["cluster.hosts"]["verdict"], "SKIP")
        self.assertEqual((data["score"], data["max_score"], data["infra_errors"]), (5, 5, 1))
        self.assertIn("INFRA-ERROR", r.stdout)

    def test_batch_job_array(self):
        subs = os.path.join(self.root, "submissions")
        for name, answer in (("alice", "ok"), ("bob", "wrong"), ("dave", "nccl")):
            os.makedirs(os.path.join(subs, name), exist_ok=True)
            with open(os.path.join(subs, name, "demo.c"), "w") as f:
                f.write(answer + "\n")
        os.makedirs(os.path.join(subs, "carol"), exist_ok=True)     # nothing handed in
        outdir = os.path.join(self.root, "batch-out")
        r = self.cluster.run(h.grade_argv(self.root, "demo", "--batch", subs, "--out", outdir),
                             timeout=150)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)     # dave: infrastructure
        self.assertIn("job array", r.stderr)
        self.assertIn("--array=0-2%2", r.stderr)
        with open(os.path.join(outdir, "grades.csv")) as f:
            rows = {row["student"]: row for row in csv.DictReader(f)}
        self.assertEqual(set(rows), {"alice", "bob", "carol", "dave"})
        self.assertEqual((rows["alice"]["score"], rows["alice"]["max_score"]), ("10", "10"))
        self.assertEqual((rows["bob"]["score"], rows["bob"]["max_score"]), ("5", "10"))
        self.assertEqual(rows["carol"]["status"], "no demo.c")
        self.assertEqual((rows["dave"]["status"], rows["dave"]["infra_errors"]),
                         ("infra-error", "1"))
        bob = h.tests_by_id(h.load(os.path.join(outdir, "bob", "results.json")))
        self.assertEqual(bob["cpu.answer"]["verdict"], "FAIL")
        self.assertIn("retrying 1 submission", r.stderr)


class MultiNode(unittest.TestCase):
    """Two slurmds, each in its own network namespace node."""

    @classmethod
    def setUpClass(cls):
        h.require_root(cls)
        h.ensure_slurm()
        cls.cluster = h.Cluster(nodes=2, gpus=1)
        cls.addClassCleanup(cls.cluster.stop)
        cls.root = h.make_root(cls.addClassCleanup)
        h.write_conf(cls.root)

    def _check_hosts(self, out):
        t = h.tests_by_id(h.load(out))["cluster.hosts"]
        self.assertEqual(t["verdict"], "PASS", t["output"])
        self.assertEqual(t["metrics"]["hosts"], ["node0", "node1"])

    def test_sbatch_on_two_nodes(self):
        out = os.path.join(self.root, "multi.json")
        r = self.cluster.run(h.grade_argv(self.root, "demo", "--cluster", "--solution",
                                          "cluster.hosts", "--json", out))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("--nodes=2", r.stderr)
        self._check_hosts(out)

    def test_srun_inside_an_allocation(self):
        out = os.path.join(self.root, "alloc.json")
        r = self.cluster.run(["salloc", "-N", "2", "--ntasks-per-node=1"]
                             + h.grade_argv(self.root, "demo", "--cluster", "--solution",
                                            "cluster.hosts", "--json", out))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("srun step", r.stderr)
        self._check_hosts(out)


if __name__ == "__main__":
    unittest.main()
