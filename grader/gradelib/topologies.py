"""Recorded topologies for the specs: the same machine with its GPUs enumerated in another order.

A spec that grades a decision on a recorded node (a ring order, a rank-to-GPU mapping) also
grades it on relabelled copies: the same links, the GPUs numbered differently, as CUDA or
another driver may number them. A fixed answer per recorded file then fails, and an answer
that follows the topology does not. The input is the form `commlab topo FILE --json`
writes (common/topo.h, cl_topo_write_json); the output is `nvidia-smi topo -m` text that
common/topo_smi.c reads.
"""

import random


def random_perms(gpus, count, rng=None):
    """count distinct permutations of range(gpus), none of them the identity (fresh each
    run unless rng is given)."""
    rng = rng or random.Random()
    out = []
    while len(out) < count:
        p = list(range(gpus))
        rng.shuffle(p)
        if p != list(range(gpus)) and p not in out:
            out.append(p)
    return out


def perms_splitting_halves(gpus, count, rng=None):
    """random_perms(gpus, count), one at least with GPUs of both halves (0 to gpus/2 - 1 and
    the rest) among its first gpus/2: on the chapter's server the halves are the NVLink
    domains, so that index order cannot be the chapter's fix on every copy."""
    half = set(range(gpus // 2))
    while True:
        perms = random_perms(gpus, count, rng)
        if any(set(p[:gpus // 2]) not in (half, set(range(gpus)) - half) for p in perms):
            return perms


def relabelled_text(node, perm):
    """The topo -m text of node (devices, links) with new GPU i = recorded GPU perm[i]; NICs
    keep their order and their names (NIC Legend). GPUs come first in every recorded file."""
    names, links = node["devices"], node["links"]
    g = sum(1 for n in names if n.startswith("GPU"))
    if sorted(perm) != list(range(g)):
        raise ValueError(f"{perm} is not a permutation of the {g} GPUs")
    order = list(perm) + list(range(g, len(names)))
    labels = [f"GPU{i}" for i in range(g)] + [f"NIC{j}" for j in range(len(names) - g)]
    lines = ["\t" + "\t".join(labels)]
    for i, a in enumerate(order):
        cells = [links[a][b] for b in order]
        lines.append(f"{labels[i]}\t" + "\t".join(" X " if c == "X" else c for c in cells))
    if len(names) > g:
        lines += ["", "NIC Legend:", ""] + [f"  NIC{j}: {n}" for j, n in enumerate(names[g:])]
    return "\n".join(lines) + "\n"
