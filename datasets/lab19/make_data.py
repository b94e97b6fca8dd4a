#!/usr/bin/python3
"""Writes lab19's recorded fabrics and job traces (datasets/lab19/README.md says what they are).

    datasets/lab19/make_data.py         rewrite fabrics/*.fabric and traces/*.csv
    datasets/lab19/make_data.py --reference build/solutions/lab19/lab19
                                        rewrite reference.json: the reference solution's
                                        replay of each recorded trace

The traces come from the generator of grader/labs/_lab19_model.py with fixed seeds, so the
files are reproducible; the grader draws fresh traces from the same generator at every run.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "grader", "labs"))
import _lab19_model as model  # noqa: E402

NODE_GBPS = 1600  # 8 x 200 Gb/s HDR compute NICs of a DGX A100


def leafspine():
    """128 DGX nodes, 8 leaf switches of 16 nodes in name order, one spine layer, 2:1."""
    names = [f"dgx{i:03d}" for i in range(1, 129)]
    leaves = [f"leaf{k:02d}" for k in range(1, 9)]
    up = {ln: 16 * NODE_GBPS / 2 for ln in leaves}
    return model.fabric("leafspine-128", "128 nodes, 8 leaves of 16, one spine tier, 2:1",
                        2, names, [i // 16 for i in range(128)], leaves, up,
                        node_gbps=NODE_GBPS, parent_of={ln: "spine" for ln in leaves},
                        upper=[("spine", 2)])


def pods():
    """192 nodes in 3 pods (a, b, c) of 4 leaves of 16; leaves 1:1 to their pod's aggregation
    switches, pods 4:1 to the core."""
    names = [f"{p}{i:03d}" for p in "abc" for i in range(1, 65)]
    leaves = [f"l{k:02d}" for k in range(1, 13)]
    podsw = [f"pod{k}" for k in range(1, 4)]
    up = {ln: 16 * NODE_GBPS for ln in leaves}
    up.update({p: 64 * NODE_GBPS / 4 for p in podsw})
    parent = {ln: podsw[k // 4] for k, ln in enumerate(leaves)}
    parent.update({p: "core" for p in podsw})
    return model.fabric("pods-192", "192 nodes, 3 pods of 4 leaves of 16, pods 4:1 to the core",
                        3, names, [i // 16 for i in range(192)], leaves, up,
                        node_gbps=NODE_GBPS, parent_of=parent,
                        upper=[(p, 2) for p in podsw] + [("core", 3)])


def scalable_units():
    """A DGX SuperPOD-like row: 5 scalable units of 20 nodes (one logical leaf each), 4:1 to the
    spine. Nodes are numbered by rack position and cabled by half rack, so consecutive names
    alternate between units; gpu042 and gpu077 are out of service."""
    names, leaf_of = [], []
    for k in range(1, 101):
        if k in (42, 77):
            continue
        names.append(f"gpu{k:03d}")
        leaf_of.append(((k - 1) // 2) % 5)
    leaves = [f"su{k}" for k in range(1, 6)]
    up = {ln: 20 * NODE_GBPS / 4 for ln in leaves}
    return model.fabric("su-100", "98 nodes in 5 scalable units of 20, cabled by half rack, 4:1",
                        2, names, leaf_of, leaves, up, node_gbps=NODE_GBPS,
                        parent_of={ln: "spine" for ln in leaves}, upper=[("spine", 2)])


FABRICS = [leafspine, pods, scalable_units]
HOURS = 48
LOAD = 1.0


METRICS = ("slowdown", "spread", "frag", "frag_leaf", "wait", "wait_multinode", "busy")


def reference(program):
    """Replays each recorded trace with the program's policy and writes reference.json."""
    out = {}
    for make in FABRICS:
        name = make()["name"]
        with tempfile.TemporaryDirectory() as tmp:
            res = os.path.join(tmp, "r.json")
            subprocess.run([program, "replay", f"fabric={HERE}/fabrics/{name}.fabric",
                            f"trace={HERE}/traces/{name}.csv", "--json", res], check=True,
                           stdout=subprocess.DEVNULL)
            with open(res, encoding="utf-8") as f:
                row = json.load(f)["rows"][0]
        if row.get("status") != "success":
            sys.exit(f"{name}: {row.get('error')}")
        out[name] = {k: round(row[k], 4) for k in METRICS}
        print(f"{name}: {out[name]}")
    with open(os.path.join(HERE, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    if sys.argv[1:2] == ["--reference"] and len(sys.argv) == 3:
        return reference(sys.argv[2])
    os.makedirs(os.path.join(HERE, "fabrics"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "traces"), exist_ok=True)
    for k, make in enumerate(FABRICS):
        f = make()
        model.write_fabric(f, os.path.join(HERE, "fabrics", f["name"] + ".fabric"))
        gpus = len(f["nodes"]) * f["gpus_per_node"]
        jobs = model.trace(random.Random(1000 + k), HOURS, gpus, LOAD)
        model.write_trace(jobs, os.path.join(HERE, "traces", f["name"] + ".csv"),
                          f"{HOURS} h of jobs for {f['name']} ({gpus} GPUs, offered load {LOAD}), "
                          f"generator of grader/labs/_lab19_model.py, seed {1000 + k}")
        print(f"{f['name']}: {len(f['nodes'])} nodes, {len(jobs)} jobs")


if __name__ == "__main__":
    main()
