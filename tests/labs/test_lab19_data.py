"""lab19's grader model: its hostlists are Slurm's (checked against scontrol when Slurm is
installed), topology.conf is read as the tree plugin reads it, the job generator reproduces the
published Helios Venus distributions it cites, and the recorded files are what make_data.py
writes."""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "grader", "labs"))
sys.path.insert(0, os.path.join(ROOT, "datasets", "lab19"))
import _lab19_model as model  # noqa: E402
import make_data  # noqa: E402


class Hostlists(unittest.TestCase):

    def test_round_trip(self):
        rng = random.Random(19)
        for k in range(100):
            names = [n["name"] for n in model.random_fabric(rng, k)["nodes"]]
            sub = rng.sample(names, rng.randint(1, len(names)))
            self.assertEqual(sorted(model.expand(model.compress(sub))), sorted(sub))

    def test_known_forms(self):
        self.assertEqual(model.compress(["dgx003", "dgx001", "dgx002", "dgx005"]), "dgx[001-003,005]")
        self.assertEqual(model.compress(["x9", "x10", "x11"]), "x[9-11]")
        self.assertEqual(model.compress(["dgx099", "dgx100", "dgx101"]), "dgx[099-101]")
        self.assertEqual(model.compress(["login", "n2", "n1"]), "login,n[1-2]")
        self.assertEqual(model.expand("r[1-2]-g[01-02]"), ["r1-g01", "r1-g02", "r2-g01", "r2-g02"])
        for bad in ("", "n[1-", "n[3-1]", "n[a]", "a,,b"):
            with self.assertRaises(model.HostlistError, msg=bad):
                model.expand(bad)

    def test_same_as_scontrol(self):
        if shutil.which("scontrol") is None:
            self.skipTest("Slurm is not installed (apt-get install -y slurm-wlm)")
        tmp = tempfile.mkdtemp(prefix="commlab-hostlist-")
        self.addCleanup(shutil.rmtree, tmp, True)
        conf = os.path.join(tmp, "slurm.conf")
        with open(conf, "w") as f:
            f.write("ClusterName=t\nSlurmctldHost=localhost\nNodeName=n1\nPartitionName=p Nodes=n1\n")
        env = dict(os.environ, SLURM_CONF=conf)
        rng = random.Random(22)
        for k in range(40):
            names = [n["name"] for n in model.random_fabric(rng, k)["nodes"]]
            sub = sorted(rng.sample(names, rng.randint(1, len(names))),
                         key=lambda n: (model._split(n)[0], int(model._split(n)[1] or 0)))
            r = subprocess.run(["scontrol", "show", "hostlist", ",".join(sub)], env=env,
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.stdout.strip(), model.compress(sub), r.stderr)


class Topology(unittest.TestCase):

    def test_parse_and_compare(self):
        f = make_data.scalable_units()
        lines = []
        for s in f["switches"]:
            if s["level"] == 1:
                lines.append(f"SwitchName={s['name']} Nodes=" + model.compress(
                    [n["name"] for n in f["nodes"] if n["leaf"] == s["name"]]))
            else:
                lines.append(f"SwitchName={s['name']} Switches=" + model.compress(
                    [c["name"] for c in f["switches"] if c["parent"] == s["name"]]))
        good = "\n".join(lines) + "\n"
        self.assertEqual(model.compare_topology(model.parse_topology(good), f), [])
        wrong = good.replace("gpu001,", "").replace("gpu[001-002,", "gpu[002,")
        self.assertTrue(model.compare_topology(model.parse_topology(wrong), f))
        for bad in ("SwitchName=a Nodes=n1 Switches=b", "Nodes=n1", "SwitchName=a Nodes=n1\n"
                    "SwitchName=a Nodes=n2", "SwitchName=a Color=red Nodes=n1"):
            with self.assertRaises(model.TopologyError, msg=bad):
                model.parse_topology(bad)


class Traces(unittest.TestCase):

    def test_sizes_follow_the_venus_cdf(self):
        rng = random.Random(5)
        sizes = [model._job(rng, 8)[0] for _ in range(40000)]
        for g, cdf in zip(model.GPU_POINTS, model.JOB_CDF):
            share = 100 * sum(1 for s in sizes if s <= g) / len(sizes)
            self.assertAlmostEqual(share, cdf, delta=1.0, msg=f"jobs of at most {g} GPUs")

    def test_gpu_time_follows_the_venus_cdf(self):
        rng = random.Random(6)
        jobs = [model._job(rng, 8) for _ in range(200000)]
        total = sum(g * d for g, d in jobs)
        for g, cdf in zip([1, 8, 32], [model.GPUTIME_CDF[0], model.GPUTIME_CDF[3],
                                        model.GPUTIME_CDF[7]]):
            share = 100 * sum(s * d for s, d in jobs if s <= g) / total
            self.assertAlmostEqual(share, cdf, delta=8.0, msg=f"GPU time of jobs <= {g} GPUs")


class RecordedFiles(unittest.TestCase):

    def test_files_are_what_make_data_writes(self):
        tmp = tempfile.mkdtemp(prefix="commlab-lab19-data-")
        self.addCleanup(shutil.rmtree, tmp, True)
        for make in make_data.FABRICS:
            f = make()
            path = os.path.join(tmp, "f")
            model.write_fabric(f, path)
            with open(path) as a, open(os.path.join(ROOT, "datasets", "lab19", "fabrics",
                                                    f["name"] + ".fabric")) as b:
                self.assertEqual(a.read(), b.read(), f"{f['name']}: rerun make_data.py")


if __name__ == "__main__":
    unittest.main()
