#!/usr/bin/python3
"""make_groups.py: lab21's tables of expected groups, written from Megatron-LM's rules.

Source: NVIDIA/Megatron-LM, tag core_v0.15.0 (commit 0d7e02bd26d3),
megatron/core/parallel_state.py:
  - generate_masked_orthogonal_rank_groups (line 242): a rank is the mixed-radix number of its
    indices, the first kind of the order varying fastest; a group holds the ranks that differ
    only in the masked kinds, enumerated with the first masked kind fastest;
  - RankGenerator (line 413): the order is lower-cased, every kind of size 1 missing from it
    is appended (in the order tp, pp, dp, ep, cp), a kind of size > 1 missing from it is an
    error, ep > 1 with cp > 1 is an error; get_ranks(token) masks the kinds named in the token;
  - initialize_model_parallel (line 514): a decoder generator (tp, ep=1, dp, pp, cp) and an
    expert generator (tp=etp, ep, dp=world/(etp ep pp), pp, cp=1) on the same order, the
    groups each builds, the embedding group (first and last rank of a pp group), and the
    checks on world size, on the expert data-parallel size and on equal pp groups.
This is an independent reading (Python standard library only), not Megatron's code; the
docstring examples of parallel_state.py are checked below (selfcheck) before anything is
written.

    datasets/lab21/make_groups.py            write groups.txt and comms.txt next to this file
    datasets/lab21/make_groups.py --check    fail if the files differ from what it would write

Both files are lines of key=value tokens. groups.txt: a RankGenerator (tp cp ep dp pp order)
and a token, `refused` (generator: RankGenerator refuses the sizes or the order; token:
get_ranks refuses the token; -: neither) and `expect`: the groups (ranks joined by ',', groups
by '|') or `invalid`.
comms.txt: a configuration of initialize_model_parallel (world tp cp pp ep etp order), a kind,
`expect` (the groups, or `invalid`) and `none`: the ranks in no group of that kind.
"""

import itertools
import os
import random
import sys

NAMES = ["tp", "cp", "ep", "dp", "pp"]
APPEND = ["tp", "pp", "dp", "ep", "cp"]  # RankGenerator's name_to_size: the missing ones, in turn


class Invalid(Exception):
    """A configuration Megatron-LM refuses (it raises or asserts)."""


def prefix_products(sizes):
    out = [1]
    for s in sizes:
        out.append(out[-1] * s)
    return out


def digits(index, shape):
    """The mixed-radix digits of index over shape (first digit fastest)."""
    out = []
    for s in shape:
        out.append(index % s)
        index //= s
    return out


def masked_groups(world, sizes, mask):
    """generate_masked_orthogonal_rank_groups: the groups of the masked kinds."""
    stride = prefix_products(sizes)
    in_shape = [s for s, m in zip(sizes, mask) if m]
    in_stride = [d for d, m in zip(stride, mask) if m]
    out_shape = [s for s, m in zip(sizes, mask) if not m]
    out_stride = [d for d, m in zip(stride, mask) if not m]
    gsize = prefix_products(in_shape)[-1]
    groups = []
    for g in range(world // gsize):
        base = sum(i * d for i, d in zip(digits(g, out_shape), out_stride))
        groups.append([base + sum(i * d for i, d in zip(digits(k, in_shape), in_stride))
                       for k in range(gsize)])
    return groups


class Generator:
    """RankGenerator(tp, ep, dp, pp, cp, order)."""

    def __init__(self, tp, cp, ep, dp, pp, order):
        size = {"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp}
        if min(size.values()) < 1:
            raise Invalid("a size below 1")
        if ep > 1 and cp > 1:
            raise Invalid("ep > 1 and cp > 1 in one generator")
        names = order.lower().split("-")
        if any(n not in NAMES for n in names) or len(set(names)) != len(names):
            raise Invalid("an unknown or repeated name in the order")
        for n in APPEND:
            if n not in names:
                if size[n] != 1:
                    raise Invalid(f"{n} has size {size[n]} but is not in the order")
                names.append(n)
        self.names = names
        self.sizes = [size[n] for n in names]
        self.world = prefix_products(self.sizes)[-1]

    def get_ranks(self, token):
        wanted = token.split("-")
        if any(t not in self.names for t in wanted):
            raise Invalid(f"token {token!r} names an unknown kind")
        mask = [n in wanted for n in self.names]
        return masked_groups(self.world, self.sizes, mask)


KINDS = ["tp", "cp", "dp", "dp-cp", "pp", "mp", "tp-cp", "tp-dp-cp", "embd", "ep", "etp", "edp"]


def init_parallel(world, tp, cp, pp, ep, etp, order):
    """initialize_model_parallel: {kind: groups} for the twelve kinds of lab21.h."""
    if min(tp, cp, pp, ep, etp) < 1:
        raise Invalid("a size below 1")
    if world % (tp * cp * pp):
        raise Invalid("world not divisible by tp x cp x pp")
    if world % (etp * ep * pp):
        raise Invalid("world not divisible by etp x ep x pp")
    dp, edp = world // (tp * cp * pp), world // (etp * ep * pp)
    dec = Generator(tp, cp, 1, dp, pp, order)
    exp = Generator(etp, 1, ep, edp, pp, order)
    if not (order.lower().endswith("pp") or pp == 1 or edp == dp):
        raise Invalid("pp is not last, and the expert data-parallel size differs from dp")
    if dec.get_ranks("pp") != exp.get_ranks("pp"):
        raise Invalid("the decoder's and the expert generator's pp groups differ")
    pp_groups = dec.get_ranks("pp")
    embd = [[g[0], g[-1]] if len(g) > 1 else [g[0]] for g in pp_groups]
    return {"tp": dec.get_ranks("tp"), "cp": dec.get_ranks("cp"), "dp": dec.get_ranks("dp"),
            "dp-cp": dec.get_ranks("dp-cp"), "pp": pp_groups, "mp": dec.get_ranks("tp-pp"),
            "tp-cp": dec.get_ranks("tp-cp"), "tp-dp-cp": dec.get_ranks("tp-dp-cp"),
            "embd": embd, "ep": exp.get_ranks("ep"), "etp": exp.get_ranks("tp"),
            "edp": exp.get_ranks("dp")}


def text(groups):
    return "|".join(",".join(str(r) for r in g) for g in groups)


def selfcheck():
    """The examples of parallel_state.py's docstrings."""
    # generate_masked_orthogonal_rank_groups: sizes [tp, dp, pp] = [2, 3, 4], the dp mask.
    dp = masked_groups(24, [2, 3, 4], [False, True, False])
    assert dp[0] == [0, 2, 4] and dp[1] == [1, 3, 5] and dp[7] == [19, 21, 23], dp
    # order tp-pp-dp, sizes 2-2-2: the dp groups.
    assert masked_groups(8, [2, 2, 2], [False, False, True]) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    # initialize_model_parallel: 16 GPUs, TP 2, PP 4 (default order).
    g = init_parallel(16, 2, 1, 4, 1, 2, "tp-cp-ep-dp-pp")
    assert g["dp"] == [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9, 11], [12, 14], [13, 15]]
    assert g["tp"] == [[2 * i, 2 * i + 1] for i in range(8)]
    assert g["pp"] == [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]]
    assert g["embd"] == [[0, 12], [1, 13], [2, 14], [3, 15]]


# --- the tables ------------------------------------------------------------------------------

def generator_cases(rng):
    """(sizes, order, token) for groups.txt: the examples, then a wide random set."""
    cases = [((2, 1, 1, 4, 2), "tp-cp-ep-dp-pp", t) for t in ("tp", "dp", "pp", "tp-pp",
                                                               "dp-cp", "tp-dp-cp")]
    cases += [((2, 1, 1, 2, 2), "tp-pp-dp", t) for t in ("dp", "pp", "tp")]
    cases += [((2, 1, 1, 3, 4), "tp-dp-pp", "dp"), ((8, 1, 1, 4, 2), "tp-cp-ep-dp-pp", "dp"),
              ((8, 1, 1, 4, 2), "tp-pp-dp", "dp"), ((1, 1, 1, 8, 1), "dp", "dp"),
              ((1, 1, 1, 1, 1), "tp-cp-ep-dp-pp", "tp-cp-ep-dp-pp")]
    # refusals: ep with cp, a missing kind, unknown or repeated names, a zero size
    cases += [((2, 2, 2, 1, 1), "tp-cp-ep-dp-pp", "tp"), ((2, 1, 1, 2, 2), "tp-dp", "tp"),
              ((2, 1, 1, 2, 1), "tp-xp-dp", "tp"), ((2, 1, 1, 2, 1), "tp-dp-tp", "dp"), ((2, 1, 1, 2, 1), "tp--dp", "dp"),
              ((2, 1, 1, 2, 1), "tp-cp-ep-dp-pp", "tp-mp"), ((2, 1, 1, 2, 1), "tp-dp", ""),
              ((0, 1, 1, 2, 1), "tp-dp", "dp"), ((2, 1, 1, 2, 1), "tp-dp", "TP")]
    # the case of the order does not matter; a token may name a kind twice
    cases += [((2, 2, 1, 2, 2), "TP-CP-EP-DP-PP", "dp-cp"), ((2, 1, 2, 2, 2), "Tp-Ep-Dp-Pp", "ep"),
              ((2, 2, 1, 2, 1), "tp-cp-dp", "dp-dp")]
    perms = list(itertools.permutations(NAMES))
    while len(cases) < 320:
        size = {n: rng.choice([1, 1, 2, 2, 3, 4]) for n in NAMES}
        if size["ep"] > 1 and size["cp"] > 1:
            size[rng.choice(["ep", "cp"])] = 1
        if prefix_products(size.values())[-1] > 256:
            continue
        names = list(rng.choice(perms))
        names = [n for n in names if size[n] > 1 or rng.random() < 0.5]  # drop some size-1 kinds
        if not names:
            names = ["dp"]
        big = [n for n in names if size[n] > 1]
        if big and rng.random() < 0.08:  # a kind of size > 1 left out: refused
            names.remove(rng.choice(big))
        token = "-".join(rng.sample(NAMES, rng.randint(1, 4)))
        if rng.random() < 0.04:  # a name no generator has: refused
            token += "-xp"
        if rng.random() < 0.08:  # the order's case does not matter
            names = [n.upper() for n in names]
        order = "-".join(names)
        cases.append(((size["tp"], size["cp"], size["ep"], size["dp"], size["pp"]), order, token))
    return cases


def comms_configs(rng):
    """(world, tp, cp, pp, ep, etp, order) for comms.txt: 2, 4, 8 ranks (cpu, gpu), 16, 64 (sim)."""
    default = "tp-cp-ep-dp-pp"
    out = [(2, 2, 1, 1, 1, 2, default), (2, 1, 1, 2, 1, 1, default), (2, 1, 2, 1, 2, 1, default),
           (2, 1, 1, 1, 2, 1, "dp-ep"), (4, 2, 1, 2, 1, 2, default), (4, 1, 2, 1, 2, 1, default),
           (4, 2, 1, 1, 2, 1, "tp-pp-dp"), (4, 4, 1, 1, 1, 4, "dp-tp"),(8, 2, 1, 2, 1, 2, default), (8, 2, 1, 2, 2, 1, default), (8, 1, 2, 2, 2, 1, default),
           (8, 2, 2, 1, 4, 2, "tp-cp-ep-dp-pp"), (8, 2, 1, 2, 2, 1, "tp-pp-ep-dp"),
           (8, 1, 1, 8, 1, 1, default), (8, 8, 1, 1, 8, 1, "ep-dp-tp-pp-cp"),
           (8, 3, 1, 1, 1, 3, default),                      # refused: 8 % 3
           (8, 2, 1, 2, 4, 1, "tp-pp-ep-dp"),                # refused: the pp groups differ
           (8, 1, 1, 2, 1, 2, "tp-cp-dp-pp-ep"),             # refused: expert dp != dp, pp not last
           (16, 2, 1, 4, 1, 2, default), (16, 2, 2, 2, 2, 2, "tp-dp-cp-ep-pp"),
           (64, 8, 1, 2, 8, 1, default), (64, 4, 2, 2, 4, 2, default),
           (64, 2, 2, 4, 2, 1, "tp-cp-ep-dp-pp"), (64, 8, 1, 4, 2, 4, "tp-ep-dp-pp"),
           (64, 2, 4, 2, 1, 2, "cp-tp-dp-pp"), (64, 1, 1, 8, 8, 1, "pp-tp-cp-ep-dp"),
           (64, 4, 1, 4, 1, 4, "tp-pp-dp"), (64, 16, 1, 1, 1, 16, "dp-tp"),
           (64, 1, 1, 2, 1, 2, "tp-dp-cp-pp-ep")]
    return out


def write(folder):
    rng = random.Random(21)
    lines = ["# lab21: RankGenerator.get_ranks(token), from datasets/lab21/make_groups.py (see "
             "README.md)."]
    for (tp, cp, ep, dp, pp), order, token in generator_cases(rng):
        refused = "-"
        try:
            g = Generator(tp, cp, ep, dp, pp, order)
        except Invalid:
            refused, expect = "generator", "invalid"
        else:
            try:
                expect = text(g.get_ranks(token or "-"))
            except Invalid:
                refused, expect = "token", "invalid"
        lines.append(f"tp={tp} cp={cp} ep={ep} dp={dp} pp={pp} order={order} "
                     f"token={token or '-'} refused={refused} expect={expect}")
    groups = "\n".join(lines) + "\n"
    lines = ["# lab21: initialize_model_parallel's groups, from datasets/lab21/make_groups.py "
             "(see README.md)."]
    for world, tp, cp, pp, ep, etp, order in comms_configs(rng):
        head = f"world={world} tp={tp} cp={cp} pp={pp} ep={ep} etp={etp} order={order}"
        try:
            kinds = init_parallel(world, tp, cp, pp, ep, etp, order)
        except Invalid:
            lines.append(f"{head} kind=* expect=invalid none=-")
            continue
        for kind in KINDS:
            member = {r for g in kinds[kind] for r in g}
            none = ",".join(str(r) for r in range(world) if r not in member) or "-"
            lines.append(f"{head} kind={kind} expect={text(kinds[kind])} none={none}")
    comms = "\n".join(lines) + "\n"
    return {os.path.join(folder, "groups.txt"): groups, os.path.join(folder, "comms.txt"): comms}


def main(argv):
    selfcheck()
    here = os.path.dirname(os.path.abspath(__file__))
    files = write(here)
    if "--check" in argv:
        bad = [p for p, t in files.items()
               if not os.path.exists(p) or open(p, encoding="utf-8").read() != t]
        for p in bad:
            print(f"{os.path.relpath(p)} differs from what make_groups.py writes")
        return 1 if bad else 0
    for path, t in files.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(t)
        print(f"wrote {os.path.relpath(path)} ({t.count(chr(10)) - 1} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
