#!/usr/bin/python3
"""Renders lab28's held-back jobs (never shipped: .release-exclude) with the model."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "datasets", "lab28"))
import make  # noqa: E402

HELD = [
    ("h01", 901, "dgx", 1, []),
    ("h02", 902, "pcie", 2, ["p2p_disabled", "pxn_off"]),
    ("h03", 903, "dgx", 2, ["wrong_iface", "few_channels", "cpu_affinity"]),
    ("h04", 904, "pcie", 1, ["ring_sys", "link_down", "p2p_disabled"]),
    ("h05", 905, "dgx", 2, ["ib_timeout", "version_mismatch"]),
    ("h06", 906, "pcie", 2, ["gdr_off", "few_channels", "ring_sys"]),
    ("h07", 907, "dgx", 2, ["socket", "cpu_affinity", "link_down"]),
    ("h08", 908, "pcie", 2, []),
    ("h09", 909, "dgx", 1, ["p2p_disabled", "few_channels"]),
    ("h10", 910, "dgx", 2, ["pxn_off", "gdr_off", "wrong_iface", "ib_timeout"]),
]

if __name__ == "__main__":
    make.write(HERE, HELD)
