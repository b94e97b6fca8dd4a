#!/usr/bin/python3
"""Renders lab28's example bundles (datasets/lab28/examples) from grader/labs/_lab28_model.py:
each NAME.txt is a job's bundle, NAME.faults its faults, one code per line."""
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "grader", "labs"))
import _lab28_model as model  # noqa: E402

EXAMPLES = [  # name, seed, kind, nodes, faults
    ("healthy-dgx-2node", 11, "dgx", 2, []),
    ("socket-and-versions", 12, "dgx", 2, ["socket", "version_mismatch"]),
    ("pcie-ring-affinity", 13, "pcie", 1, ["ring_sys", "cpu_affinity"]),
    ("gdr-timeout-link", 14, "dgx", 2, ["gdr_off", "ib_timeout", "link_down"]),
]


def write(folder, items):
    os.makedirs(folder, exist_ok=True)
    for name, seed, kind, nodes, codes in items:
        st = model.new_state(random.Random(seed), kind, nodes)
        for c in codes:
            model.inject(st, c)
        with open(os.path.join(folder, name + ".txt"), "w", encoding="utf-8") as f:
            f.write(model.render(st, seed))
        with open(os.path.join(folder, name + ".faults"), "w", encoding="utf-8") as f:
            f.write("".join(c + "\n" for c in model.faults(st)))


if __name__ == "__main__":
    write(os.path.join(ROOT, "datasets", "lab28", "examples"), EXAMPLES)
