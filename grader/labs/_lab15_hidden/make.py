#!/usr/bin/python3
"""make.py: write lab 15's held-back clusters (the grader's only; never shipped, see
.release-exclude). Each is a state of grader/labs/_lab15_model.py that random generation
does not produce: what a validator that only follows the happy path gets wrong.

    /usr/bin/python3 grader/labs/_lab15_hidden/make.py
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import _lab15_model as model  # noqa: E402


def held_back():
    rng = random.Random(1515)
    out = {}

    # One NIC also has an IPv6 address: its RoCE v2 IPv4 GID is at index 5, not 3. A single
    # NCCL_IB_GID_INDEX cannot serve both NICs of gpu02; gpu01's 3 is right.
    s = model.new_state(rng, 2, 2, seed_name="h1")
    s["hosts"][1]["nics"][1]["extra_gids"] = ["fd00:10:2::12"]
    out["h1"] = s

    # A driver without MLNX_OFED's ECN sysfs: only the counters tell that gpu01's mlx5_1
    # sends no CNP and its mlx5_0 ignores the CNPs it gets.
    s = model.new_state(rng, 2, 2, seed_name="h2")
    for n in s["hosts"][0]["nics"]:
        n["ecn_sysfs"] = False
    s["hosts"][0]["nics"][1]["ecn_np"][3] = 0
    s["hosts"][0]["nics"][0]["ecn_rp"][3] = 0
    out["h2"] = s

    # Management ports: lossy by design (not faults), but never in NCCL_IB_HCA; unset, NCCL
    # would use them too. gpu03's list with ports and '=' is right.
    s = model.new_state(rng, 3, 2, mgmt=True, seed_name="h3")
    s["hosts"][0]["env"]["NCCL_IB_HCA"] = "mlx5_0,mlx5_1,mlx5_2"
    del s["hosts"][1]["env"]["NCCL_IB_HCA"]
    s["hosts"][2]["env"]["NCCL_IB_HCA"] = "=mlx5_0:1,mlx5_1:1"
    out["h3"] = s

    # A port down, and the switch pausing a lossy priority too.
    s = model.new_state(rng, 2, 2, seed_name="h4")
    s["hosts"][1]["nics"][1]["state"], s["hosts"][1]["nics"][1]["phys"] = "DOWN", "DISABLED"
    s["switches"][0]["pfc_prios"] = [3, 4]
    out["h4"] = s

    # Four rails, DSCPs listed high to low: CNP's DSCP on the wrong priority on one NIC,
    # PCP trust on another (its mapping is not printed), a shared buffer on a third.
    # NCCL_IB_TC=104 is DSCP 26 with the ECN bits clear: right.
    s = model.new_state(rng, 2, 4, seed_name="h5")
    for h in s["hosts"]:
        h["env"]["NCCL_IB_TC"] = "104"
        for n in h["nics"]:
            n["dscp_order"] = "descending"
    s["hosts"][0]["nics"][2]["dscp2prio"][48] = 7
    s["hosts"][1]["nics"][0]["trust"] = "pcp"
    s["hosts"][1]["nics"][3]["prio2buffer"] = [0] * 8
    out["h5"] = s

    # Healthy, written differently: no NCCL_IB_GID_INDEX (NCCL finds it), NCCL_IB_TC=106,
    # NCCL_IB_HCA with ports. Nothing to report.
    s = model.new_state(rng, 3, 2, seed_name="h6")
    for h in s["hosts"]:
        del h["env"]["NCCL_IB_GID_INDEX"]
        h["env"]["NCCL_IB_HCA"] = "mlx5_1:1,mlx5_0:1"
        h["env"]["NCCL_IB_TC"] = "106"
    out["h6"] = s

    # Everything at once on a small cluster.
    s = model.new_state(rng, 2, 2, mgmt=True, seed_name="h7")
    s["switches"][0]["ecn_min"], s["switches"][0]["ecn_max"] = 1500, 3000
    s["switches"][0]["tcs"] = [[3, 3, "RoCE", "WRR 50%"], [6, 6, "CNP", "WRR 10%"]]
    s["hosts"][0]["nics"][0]["roce_tos"] = 0
    s["hosts"][0]["nics"][1]["mtu"] = 1500
    s["hosts"][1]["nics"][1]["ecn_rp"][3] = 0
    s["hosts"][1]["nics"][1]["cnp_prio"] = 3
    out["h7"] = s
    return out


if __name__ == "__main__":
    for name, state in held_back().items():
        with open(os.path.join(HERE, name + ".json"), "w") as f:
            json.dump(state, f, indent=1)
            f.write("\n")
        print(name, model.faults(state))
