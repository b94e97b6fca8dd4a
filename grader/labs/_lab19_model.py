"""lab19's model: Slurm hostlists and topology.conf, tree fabrics, and the job-trace generator.

Hostlists follow Slurm's rules (src/common/hostlist.c, slurm-22.05): a host name is a prefix and
a numeric suffix; `prefix[lo-hi,n,...]` lists suffixes, zero-padded to the width of the written
number; items are separated by commas outside brackets. compress() is what `scontrol show
hostlist` prints for the names in sorted order; expand() reads any such expression (several
bracket groups in one item are a product, as in Slurm).

topology.conf follows topology.conf(5) of the tree plugin (doc/man/man5/topology.conf.5): one
switch per line, `SwitchName=<name>` with `Nodes=<hostlist>` (a leaf) or `Switches=<hostlist>`
(above the leaves), and an optional `LinkSpeed=<number>`; '#' starts a comment.

The job generator draws GPU counts and durations from the published distributions of the
Helios trace's Venus cluster (SenseTime; Hu et al., SC'21; the CDFs of its figures as
released in S-Lab-System-Group/HeliosArtifact, see datasets/lab19/README.md).
"""

import math
import random
import re

# --- hostlists --------------------------------------------------------------------------------

_SPLIT = re.compile(r"^(.*?)(\d*)$")


def _split(name):
    prefix, digits = _SPLIT.match(name).groups()
    return prefix, digits


def compress(names):
    """Slurm's compressed form of a set of host names, sorted (prefix, then number)."""
    groups = {}
    plain = []
    for n in set(names):
        prefix, digits = _split(n)
        if not digits:
            plain.append(n)
            continue
        padded = len(digits) > 1 and digits[0] == "0"
        groups.setdefault(prefix, []).append((int(digits), len(digits), padded))
    items = []
    for prefix in sorted(set(groups) | set(plain)):
        if prefix in plain:
            items.append(prefix)
        if prefix not in groups:
            continue
        nums = sorted(groups[prefix])
        ranges = []
        for num, width, padded in nums:
            if ranges:
                lo, hi, w, p = ranges[-1]
                if num == hi + 1 and (w == width or (not p and not padded)):
                    ranges[-1] = (lo, num, w if p else min(w, width), p)
                    continue
            ranges.append((num, num, width, padded))

        def fmt(n, w, p):
            return str(n).zfill(w) if p else str(n)

        parts = [fmt(lo, w, p) if lo == hi else f"{fmt(lo, w, p)}-{fmt(hi, w, p)}"
                 for lo, hi, w, p in ranges]
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            items.append(prefix + parts[0])
        else:
            items.append(f"{prefix}[{','.join(parts)}]")
    return ",".join(items)


class HostlistError(ValueError):
    pass


def _top_split(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"'{text}': ']' without '['")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise HostlistError(f"'{text}': '[' never closed")
    out.append(cur)
    return out


def _expand_item(item, whole=True):
    m = re.search(r"\[([^\[\]]*)\]", item)
    if not m:
        if (whole and not item) or not re.fullmatch(r"[A-Za-z0-9._-]*", item):
            raise HostlistError(f"'{item}' is not a host name")
        return [item]
    head, body, tail = item[:m.start()], m.group(1), item[m.end():]
    out = []
    for part in body.split(","):
        mm = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not mm:
            raise HostlistError(f"'{item}': '{part}' is not a number or a range lo-hi")
        lo_s, hi_s = mm.group(1), mm.group(2) or mm.group(1)
        lo, hi, width = int(lo_s), int(hi_s), len(lo_s)
        if hi < lo or hi - lo > 100000:
            raise HostlistError(f"'{item}': range {part} runs backwards or is too long")
        for n in range(lo, hi + 1):
            for rest in _expand_item(tail, False):
                out.append(head + str(n).zfill(width) + rest)
    return out


def expand(expr):
    """The host names of a hostlist expression, in order (duplicates kept)."""
    expr = expr.strip()
    if not expr:
        raise HostlistError("an empty hostlist")
    names = []
    for item in _top_split(expr):
        names += _expand_item(item.strip())
    return names


# --- topology.conf ---------------------------------------------------------------------------

class TopologyError(ValueError):
    pass


def parse_topology(text):
    """{switch: {"nodes": [...] or None, "switches": [...] or None, "line": n}} from the text of
    a topology.conf; TopologyError with the line for anything topology.conf(5) does not allow."""
    out = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = {}
        for tok in line.split():
            key, eq, value = tok.partition("=")
            if not eq or not value:
                raise TopologyError(f"line {number}: '{tok}' is not Key=Value")
            k = key.lower()
            if k not in ("switchname", "switches", "nodes", "linkspeed"):
                raise TopologyError(f"line {number}: unknown key '{key}' (SwitchName, Switches, "
                                    f"Nodes, LinkSpeed)")
            if k in fields:
                raise TopologyError(f"line {number}: {key} given twice")
            fields[k] = value
        if "switchname" not in fields:
            raise TopologyError(f"line {number}: no SwitchName")
        name = fields["switchname"]
        if name in out:
            raise TopologyError(f"line {number}: switch {name} defined again "
                                f"(first on line {out[name]['line']})")
        if ("nodes" in fields) == ("switches" in fields):
            raise TopologyError(f"line {number}: switch {name} needs exactly one of Nodes= "
                                f"(a leaf) and Switches= (above the leaves)")
        if "linkspeed" in fields and not re.fullmatch(r"\d+", fields["linkspeed"]):
            raise TopologyError(f"line {number}: LinkSpeed={fields['linkspeed']} is not a "
                                f"whole number")
        try:
            nodes = expand(fields["nodes"]) if "nodes" in fields else None
            switches = expand(fields["switches"]) if "switches" in fields else None
        except HostlistError as e:
            raise TopologyError(f"line {number}: {e}") from None
        out[name] = {"nodes": nodes, "switches": switches, "line": number}
    if not out:
        raise TopologyError("no switches")
    return out


def compare_topology(parsed, fabric):
    """A list of differences between a parsed topology.conf and the fabric (empty: equal)."""
    problems = []
    want = {s["name"]: s for s in fabric["switches"]}
    for name in parsed:
        if name not in want:
            problems.append(f"switch {name} is not in the fabric")
    for name, s in want.items():
        got = parsed.get(name)
        if got is None:
            problems.append(f"switch {name} is missing")
            continue
        if s["level"] == 1:
            children = sorted(n["name"] for n in fabric["nodes"] if n["leaf"] == name)
            have, what = got["nodes"], "Nodes"
        else:
            children = sorted(c["name"] for c in fabric["switches"] if c["parent"] == name)
            have, what = got["switches"], "Switches"
        if have is None:
            problems.append(f"switch {name}: expected {what}=, found the other kind")
            continue
        if len(have) != len(set(have)):
            problems.append(f"switch {name}: {what}= names a child twice")
        if sorted(set(have)) != children:
            extra = sorted(set(have) - set(children))
            missing = sorted(set(children) - set(have))
            problems.append(f"switch {name}: {what}= differs"
                            + (f"; not below it: {compress(extra)}" if extra else "")
                            + (f"; missing: {compress(missing)}" if missing else ""))
    return problems


# --- fabrics -----------------------------------------------------------------------------------

def fabric(name, title, levels, node_names, leaf_of, leaf_names, up_gbps, node_gbps=1600,
           gpus=8, parent_of=None, upper=()):
    """A fabric dict. leaf_of[i]: leaf index of node i; up_gbps: {switch name: Gb/s}; parent_of:
    {switch: parent}; upper: [(name, level)] switches above the leaves."""
    sw = [{"name": n, "level": 1, "parent": (parent_of or {}).get(n), "up_gbps": up_gbps.get(n, 0)}
          for n in leaf_names]
    sw += [{"name": n, "level": lv, "parent": (parent_of or {}).get(n),
            "up_gbps": up_gbps.get(n, 0)} for n, lv in upper]
    nodes = [{"name": node_names[i], "leaf": leaf_names[leaf_of[i]]} for i in range(len(node_names))]
    return {"name": name, "title": title, "levels": levels, "gpus_per_node": gpus,
            "node_gbps": node_gbps, "switches": sw, "nodes": nodes}


def write_fabric(f, path):
    """The harness's fabric file: switch and node lines (labs/lab19/harness_fabric.c reads it)."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"# lab19 fabric {f['name']}: {f['title']}\n")
        out.write(f"gpus_per_node {f['gpus_per_node']}\nnode_gbps {f['node_gbps']}\n")
        order = sorted(f["switches"], key=lambda s: -s["level"])   # parents first
        for s in order:
            out.write(f"switch {s['name']} level {s['level']} parent {s['parent'] or '-'} "
                      f"up_gbps {s['up_gbps']:g}\n")
        for n in f["nodes"]:
            out.write(f"node {n['name']} {n['leaf']}\n")


def random_fabric(rng, tag):
    """A fresh fabric for the topology check: 2 or 3 levels, uneven leaves, gaps in the
    numbering, one or several name prefixes, nodes wired to leaves in or out of name order."""
    levels = rng.choice([2, 2, 3])
    nleaf = rng.randint(3, 9)
    sizes = [rng.randint(4, 20) for _ in range(nleaf)]
    total = sum(sizes)
    scheme = rng.choice(["one", "pods", "racks"])
    width = rng.choice([2, 3, 4])
    prefixes = {"one": [rng.choice(["dgx", "gpu", "node", "hgx-a", "n"])],
                "pods": [f"p{c}n" for c in "abcd"],
                "racks": [f"r{i:02d}-g" for i in range(1, 6)]}[scheme]
    names, used = [], set()
    num = rng.randint(0, 5)
    for i in range(total):
        num += 1 + (rng.random() < 0.08)           # now and then a decommissioned node
        prefix = prefixes[(i * len(prefixes)) // total]
        n = f"{prefix}{str(num).zfill(width)}"
        if n in used:
            n = f"{prefix}{str(num + 5000).zfill(width)}"
        used.add(n)
        names.append(n)
    leaf_of = [k for k, s in enumerate(sizes) for _ in range(s)]
    if rng.random() < 0.5:
        rng.shuffle(leaf_of)                        # cabling out of name order
    lw = rng.choice([1, 2, 3])
    lp = rng.choice(["leaf", "sw", "ib-leaf", "s"])
    leaf_names = [f"{lp}{str(k + rng.choice([0, 1])).zfill(lw)}" for k in range(nleaf)]
    leaf_names = [f"{lp}{str(k + 1).zfill(lw)}" for k in range(nleaf)] \
        if len(set(leaf_names)) < nleaf else leaf_names
    parent_of, upper, up = {}, [], {}
    if levels == 2:
        top = rng.choice(["spine", "core", "top0"])
        upper.append((top, 2))
        for ln in leaf_names:
            parent_of[ln] = top
    else:
        npod = rng.randint(2, min(4, nleaf))
        pods = [f"agg{c}" for c in range(npod)]
        top = rng.choice(["core", "core0", "spine"])
        upper += [(p, 2) for p in pods] + [(top, 3)]
        for k, ln in enumerate(leaf_names):
            parent_of[ln] = pods[k * npod // nleaf]
        for p in pods:
            parent_of[p] = top
    over = rng.choice([1, 2, 4])
    for k, ln in enumerate(leaf_names):
        up[ln] = sizes[k] * 1600 / over
    for name, level in upper:
        if level == 2 and levels == 3:
            up[name] = sum(sizes[k] for k, ln in enumerate(leaf_names)
                           if parent_of[ln] == name) * 1600 / 4
    return fabric(f"fresh-{tag}", "a fresh fabric", levels, names, leaf_of, leaf_names, up,
                  parent_of=parent_of, upper=upper)


# --- jobs ---------------------------------------------------------------------------------------

# Venus (Helios), jobs with at least one GPU: the fraction of jobs with at most g GPUs and the
# fraction of GPU time in those jobs (Hu et al., SC'21, the CDFs of job sizes; values read from
# the vector data of HeliosArtifact's analysis/3_job characterization/job_cdf_gpunum.pdf).
GPU_POINTS = [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 128]
JOB_CDF = [51.84, 57.38, 64.80, 89.98, 89.98, 94.14, 95.04, 97.76, 98.05, 98.30, 98.48, 98.71, 100.0]
GPUTIME_CDF = [4.63, 8.00, 12.77, 42.14, 42.14, 58.33, 60.18, 83.43, 84.79, 85.86, 87.98, 90.90,
               100.0]
# The fraction of GPU jobs that ran at most 2**i seconds, i = 0..21 (job_cdf_jobtime.pdf).
DURATION_CDF = [1.89, 2.78, 4.06, 6.37, 9.64, 14.76, 23.22, 37.64, 55.05, 65.14, 72.86, 78.53,
                83.67, 86.89, 89.65, 92.33, 95.42, 97.46, 98.90, 99.64, 99.94, 100.0]
MAX_DURATION = 2 ** 17   # 36 hours: the longest jobs are cut, so that a replay ends


def _classes():
    """(gpus, probability, duration factor): the factor makes the GPU-time shares match."""
    out, prev_j, prev_g = [], 0.0, 0.0
    for g, cj, cg in zip(GPU_POINTS, JOB_CDF, GPUTIME_CDF):
        pj, pg = (cj - prev_j) / 100, (cg - prev_g) / 100
        prev_j, prev_g = cj, cg
        if pj <= 0:
            continue
        out.append([g, pj, pg / (pj * g)])
    mean = sum(p * f for _, p, f in out)
    return [(g, p, f / mean) for g, p, f in out]


CLASSES = _classes()


def _duration(rng):
    u = rng.random() * 100
    prev = 0.0
    for i, c in enumerate(DURATION_CDF):
        if u <= c:
            lo = 2 ** (i - 1) if i else 0.5
            frac = (u - prev) / (c - prev) if c > prev else 0
            return lo * (2 ** i / lo) ** frac     # log-uniform inside the bucket
        prev = c
    return 2.0 ** 21


def _job(rng, gpus_per_node):
    u, acc = rng.random(), 0.0
    for g, p, factor in CLASSES:
        acc += p
        if u <= acc:
            break
    d = min(MAX_DURATION, max(1.0, _duration(rng) * factor))
    if g > gpus_per_node:
        g = (g + gpus_per_node - 1) // gpus_per_node * gpus_per_node
    return g, d


def mean_gpu_seconds(samples=20000, seed=1, gpus_per_node=8):
    rng = random.Random(seed)
    return sum(g * d for g, d in (_job(rng, gpus_per_node) for _ in range(samples))) / samples


def trace(rng, hours, total_gpus, load=0.9, gpus_per_node=8, max_gpus=None):
    """Jobs [(id, submit s, gpus, duration s)] arriving by a Poisson process for `hours`, at the
    rate that offers `load` x total_gpus of GPU time; none larger than max_gpus."""
    rate = load * total_gpus / mean_gpu_seconds(gpus_per_node=gpus_per_node)
    jobs, t, k = [], 0.0, 0
    while True:
        t += rng.expovariate(rate)
        if t > hours * 3600:
            return jobs
        g, d = _job(rng, gpus_per_node)
        if max_gpus and g > max_gpus:
            continue
        k += 1
        jobs.append((k, round(t, 1), g, round(d, 1)))


def write_trace(jobs, path, note):
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"# {note}\n# job_id,submit_s,gpu_num,duration_s\n")
        for j in jobs:
            out.write(f"{j[0]},{j[1]},{j[2]},{j[3]}\n")
