#!/usr/bin/python3
"""make_examples.py: write lab 15's example clusters (NAME.state.json, the cluster's state;
NAME.txt, its dump) from the grader's model, reproducibly.

    /usr/bin/python3 datasets/lab15/make_examples.py
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "grader", "labs"))
import _lab15_model as model  # noqa: E402


def examples():
    out = {}
    rng = random.Random(1501)
    s = model.new_state(rng, 2, 2, mgmt=True, seed_name="healthy-2x2")
    out["healthy-2x2"] = s

    s = model.new_state(rng, 2, 2, seed_name="pfc-and-tc")
    s["hosts"][0]["nics"][1]["pfc"] = [0, 0, 0, 0, 1, 0, 0, 0]
    s["hosts"][1]["env"]["NCCL_IB_TC"] = "26"
    out["pfc-and-tc"] = s

    s = model.new_state(rng, 2, 2, seed_name="switch-ecn-trust")
    s["switches"][0]["trust"] = "L2"
    s["switches"][0]["ecn_min"], s["switches"][0]["ecn_max"] = 1500, 150
    s["hosts"][1]["nics"][0]["ecn_np"][3] = 0
    out["switch-ecn-trust"] = s

    s = model.new_state(rng, 3, 2, seed_name="gid-mtu-cnp")
    for h in s["hosts"]:
        h["env"]["NCCL_IB_GID_INDEX"] = "1"
    s["hosts"][2]["nics"][1]["mtu"] = 1500
    s["hosts"][0]["nics"][0]["dscp2prio"][48] = 0
    s["hosts"][0]["nics"][0]["dscp_order"] = "descending"
    out["gid-mtu-cnp"] = s
    return out


def main():
    for name, state in examples().items():
        with open(os.path.join(HERE, "examples", name + ".state.json"), "w") as f:
            json.dump(state, f, indent=1)
            f.write("\n")
        with open(os.path.join(HERE, "examples", name + ".txt"), "w") as f:
            f.write(model.render(state, seed=15))
        print(name, model.faults(state))


if __name__ == "__main__":
    main()
