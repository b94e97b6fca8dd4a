"""lab15's shipped examples are exactly what the grader's model renders from their states;
the example and held-back clusters are well formed; every graded set of generated clusters
holds every kind of fault."""

import glob
import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "grader", "labs"))
import _lab15_model as model  # noqa: E402


def states(pattern):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
        with open(path, encoding="utf-8") as f:
            yield path, json.load(f)


class Lab15Data(unittest.TestCase):

    def test_examples_match_their_states(self):
        found = list(states("datasets/lab15/examples/*.state.json"))
        self.assertGreaterEqual(len(found), 4)
        for path, st in found:
            with open(path.replace(".state.json", ".txt"), encoding="utf-8") as f:
                self.assertEqual(f.read(), model.render(st, seed=15),
                                 f"{path}: rerun datasets/lab15/make_examples.py")

    def test_clusters_are_well_formed(self):
        # Every example and held-back cluster but the healthy ones has a fault, and every
        # NIC has a RoCE v2 IPv4 GID.
        for path, st in list(states("datasets/lab15/examples/*.state.json")) + \
                list(states("grader/labs/_lab15_hidden/*.json")):
            self.assertTrue(model.faults(st) or "healthy" in path or path.endswith("h6.json"),
                            f"{path}: a cluster with no fault")
            for host in st["hosts"]:
                for n in host["nics"]:
                    self.assertIsNotNone(model.roce_v2_ipv4_index(n), path)

    def test_generated_sets_hold_every_variant(self):
        import random
        for seed in range(5):
            got = set()
            for st in model.generated_set(random.Random(seed), 24):
                got |= {f[0] for f in model.faults(st)}
            self.assertEqual(got, set(model.CODES), f"seed {seed}")


if __name__ == "__main__":
    unittest.main()
