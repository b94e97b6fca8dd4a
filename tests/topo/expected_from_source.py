#!/usr/bin/env python3
"""expected_from_source.py: a second, independent reader of the recorded topologies.

It writes the JSON that `commlab topo FILE --json` must print, using Python's
own XML parser and a regular-expression reader for `nvidia-smi topo -m`, so
the expected files in tests/topo/expected/ do not come from the C parser they
check. Every output was also compared by eye with its source (see
datasets/topologies/README.md and tests/topo/real/SOURCES.md).

    /usr/bin/python3 tests/topo/expected_from_source.py FILE > expected.json
"""
import re
import sys
import xml.etree.ElementTree as ET

CODE = re.compile(r"NV\d+|NODE|PIX|PXB|PHB|SYS|X")
AFF = ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]


def read_smi(text):
    lines = text.splitlines()
    i = 0
    while not lines[i].strip():
        i += 1
    header = lines[i]
    rows = []
    for line in lines[i + 1:]:
        if not line.strip() or line.strip().startswith("Legend"):
            break
        rows.append(line)
    n = len(rows)
    cols = [a for a in AFF if a in header]
    cols.sort(key=header.index)
    names, links, cpu, numa = [], [], {}, {}
    for row in rows:
        name, rest = row.split(None, 1)
        names.append(name)
        cells = []
        pos = 0
        while len(cells) < n:
            m = CODE.match(rest, pos + len(rest[pos:]) - len(rest[pos:].lstrip()))
            cells.append(m.group(0))
            pos = m.end()
        links.append(cells)
        vals = rest[pos:].split()
        for col, v in zip(cols[len(cols) - len(vals):], vals):
            if col == "CPU Affinity" and v != "N/A":
                cpu[name] = v
            elif col == "NUMA Affinity":
                numa[name] = None if v == "N/A" else int(v)
    legend = dict(re.findall(r"^\s*(\S+):\s*(\S+)\s*$", text.split("NIC Legend:")[1], re.M)) \
        if "NIC Legend:" in text else {}
    rename = {k: legend.get(k, k) for k in names}
    return ([rename[k] for k in names], links, {rename[k]: v for k, v in cpu.items()},
            {rename[k]: v for k, v in numa.items()})


def cpulist(mask):
    value = int(mask.replace(",", ""), 16)
    out, b = [], 0
    while value >> b:
        if value >> b & 1:
            e = b
            while value >> (e + 1) & 1:
                e += 1
            out.append(str(b) if e == b else f"{b}-{e}")
            b = e + 1
        else:
            b += 1
    return ",".join(out)


def read_nccl(text):
    root = ET.fromstring(text)
    devs = []  # (kind, dev, order, name, busid, cpu index, bridge chain, gpu element)

    def walk(node, cpu, chain):
        for c in node:
            if c.tag == "nic" and node.tag == "cpu":
                for net in c.iter("net"):
                    devs.append(("nic", int(net.get("dev", -1)), len(devs), net.get("name"), "",
                                 cpu, chain, None))
            if c.tag != "pci":
                continue
            bridge = False
            for g in c:
                if g.tag == "gpu":
                    d = int(g.get("dev"))
                    devs.append(("gpu", d, len(devs), f"GPU{d}", c.get("busid").lower(), cpu,
                                 chain, g))
                elif g.tag == "nic":
                    for net in g.iter("net"):
                        devs.append(("nic", int(net.get("dev", -1)), len(devs), net.get("name"),
                                     c.get("busid").lower(), cpu, chain, None))
                elif g.tag == "pci":
                    bridge = True
            if bridge:
                walk(c, cpu, chain + [id(c)])

    cpus = [c for c in root if c.tag == "cpu"]
    for k, c in enumerate(cpus):
        walk(c, k, [])
    devs.sort(key=lambda d: (d[0] != "gpu", d[1], d[2]))

    def nv(a, b):
        if a[7] is None or b[7] is None:
            return 0
        for x, y in ((a, b), (b, a)):
            direct = sum(int(l.get("count")) for l in x[7].iter("nvlink")
                         if int(l.get("tclass"), 16) == 0x030200 and l.get("target").lower() == y[4])
            if direct:
                return direct
        sw = [sum(int(l.get("count")) for l in x[7].iter("nvlink")
                  if int(l.get("tclass"), 16) == 0x068000) for x in (a, b)]
        return min(sw) if all(sw) else 0

    def pcie(a, b):
        if a[5] != b[5]:
            return "SYS"
        if a[4] and a[4] == b[4]:
            return "PIX"
        common = 0
        while common < min(len(a[6]), len(b[6])) and a[6][common] == b[6][common]:
            common += 1
        if common == 0:
            return "PHB"
        return "PIX" if len(a[6]) + len(b[6]) - 2 * common + 1 == 1 else "PXB"

    links = [["X" if i == j else (f"NV{nv(a, b)}" if nv(a, b) else pcie(a, b))
              for j, b in enumerate(devs)] for i, a in enumerate(devs)]
    cpu, numa = {}, {}
    for d in devs:
        c = cpus[d[5]]
        if c.get("affinity") and cpulist(c.get("affinity")):
            cpu[d[3]] = cpulist(c.get("affinity"))
        if c.get("numaid") is not None:
            numa[d[3]] = int(c.get("numaid")) if int(c.get("numaid")) >= 0 else None
    return [d[3] for d in devs], links, cpu, numa


def dump(names, links, cpu, numa):
    q = lambda s: '"' + s + '"'
    rows = ", ".join("[" + ", ".join(q(c) for c in r) + "]" for r in links)
    cpus = ", ".join(f"{q(k)}: {q(cpu[k])}" for k in names if k in cpu)
    numas = ", ".join(f"{q(k)}: {'null' if numa[k] is None else numa[k]}" for k in names if k in numa)
    return (f'{{"devices": [{", ".join(q(n) for n in names)}], "links": [{rows}], '
            f'"cpu_affinity": {{{cpus}}}, "numa_affinity": {{{numas}}}}}')


if __name__ == "__main__":
    text = open(sys.argv[1]).read()
    print(dump(*(read_nccl(text) if text.lstrip().startswith("<") else read_smi(text))))
