"""test_relabelled.py: the training-step search finds the same best plan on a node whose GPUs
are relabelled, which lets lab07's grader take a relabelled copy's best from its base and
cost only the copy's index mapping (reference mode, naive_only=1).

Run: /usr/bin/python3 -m unittest tests.sim.test_relabelled (after `make solution-lab07`).
"""
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "build", "solutions", "lab07", "lab07")
sys.path.insert(0, os.path.join(ROOT, "grader"))
from gradelib.topologies import perms_splitting_halves, relabelled_text  # noqa: E402


def lab07_spec():
    spec = importlib.util.spec_from_file_location(
        "lab07_spec", os.path.join(ROOT, "grader", "labs", "lab07.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reference(tmp, cases, name):
    path, out = os.path.join(tmp, f"{name}.cases"), os.path.join(tmp, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        for keys in cases:
            f.write(" ".join(f"{k}={v}" for k, v in keys.items()) + "\n")
    r = subprocess.run([BIN, "reference", "--cases", path, "--json", out], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError(f"lab07 reference failed: {r.stderr}")
    with open(out, encoding="utf-8") as f:
        return json.load(f)["rows"]


@unittest.skipUnless(os.path.exists(BIN), "build/solutions/lab07/lab07 is not built")
class RelabelledCopies(unittest.TestCase):
    def test_copy_best_is_base_best(self):
        wanted = {"dgx1-v100.topo.txt x1", "chapter1-hybrid-mesh.topo.txt x1",
                  "dgx1-v100.topo.txt x2"}
        base = [(n, k) for n, k in lab07_spec().base_cases() if n in wanted]
        self.assertEqual(len(base), len(wanted))
        rng = random.Random(7)
        with tempfile.TemporaryDirectory() as tmp:
            rows = reference(tmp, [dict(k, topo_json=os.path.join(tmp, f"n{i}.json"))
                                   for i, (_, k) in enumerate(base)], "base")
            copies = []
            for i, ((name, keys), ref) in enumerate(zip(base, rows)):
                with open(os.path.join(tmp, f"n{i}.json"), encoding="utf-8") as f:
                    node = json.load(f)
                for perm in perms_splitting_halves(8, 2, rng):
                    path = os.path.join(tmp, f"n{i}.{''.join(map(str, perm))}.topo.txt")
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(relabelled_text(node, perm))
                    copies.append((name, ref, dict(keys, topo=path)))
            searched = reference(tmp, [k for _, _, k in copies], "searched")
            derived = reference(tmp, [dict(k, naive_only=1) for _, _, k in copies], "derived")
            for (name, ref, _), full, naive in zip(copies, searched, derived):
                with self.subTest(case=name):
                    # The same optimum, to the last bit: the same candidates, costed alike.
                    self.assertEqual(full["best_overhead_s"], ref["best_overhead_s"])
                    self.assertEqual(full["best_step_s"], ref["best_step_s"])
                    self.assertNotIn("best_step_s", naive)
                    for k in ("naive_layout", "naive_overhead_s", "naive_step_s"):
                        self.assertEqual(naive[k], full[k])


if __name__ == "__main__":
    unittest.main()
