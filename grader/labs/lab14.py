"""lab14: InfiniBand routing and fat trees.

The grader builds every fabric itself from the handout's rules (written below again, not
taken from the reference), writes it as an ibnetdiscover topology file, and has the lab's
program hand it to the student's code. The harness walks every route the student's tables
make, builds their channel dependency graph and searches it for a cycle, recomputes link
loads, and times a placement's AllReduce with the simulator's flow engine on the student's
own routes (common/fabric.h, common/sim/sim_paths.h). Inputs are drawn fresh on every run.
"""

import os
import random

from gradelib import CheckFailed, Lab, answers, expect, perf_samples
from gradelib.netplot import cables_of, plot_fabric

lab = Lab("lab14", title="IB 路由与胖树", program="lab14",
          student_files=["labs/lab14/lab14.c", "labs/lab14/answers.txt"])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

X5 = "datasets/lab14/psmn-x5.topofile"
X5_SPINES = ["S-0008f10500108098", "S-0008f10500108530"]   # from X5.spine (see README)
SUPERPOD = dict(sus=4, nodes=32, rails=8, spines=16)         # DGX SuperPOD H100 RA, 4 SU
GiB = 1 << 30


# --- the handout's fabrics ------------------------------------------------------------

class Fabric:
    """Hosts 0..nhosts-1 (one port), then switches; link[a][p] = (b, q) or None."""

    def __init__(self, nhosts, nports, level, gbps):
        self.nhosts, self.nnodes, self.nports = nhosts, len(nports), list(nports)
        self.level, self.gbps = list(level), gbps
        self.link = [[None] * n for n in nports]
        self.desc = [""] * self.nnodes

    def cable(self, a, pa, b, pb):
        self.link[a][pa] = (b, pb)
        self.link[b][pb] = (a, pa)


def fat_tree(k):
    h, H = k // 2, k ** 3 // 4
    edge0, agg0, core0 = H, H + k * h, H + 2 * k * h
    n = core0 + h * h
    f = Fabric(H, [1] * H + [k] * (n - H),
               [0] * H + [1] * (k * h) + [2] * (k * h) + [3] * (h * h), 100)
    for p in range(k):
        for e in range(h):
            for i in range(h):
                f.cable(p * h * h + e * h + i, 0, edge0 + p * h + e, i)
            for a in range(h):
                f.cable(edge0 + p * h + e, h + a, agg0 + p * h + a, e)
        for a in range(h):
            for j in range(h):
                f.cable(agg0 + p * h + a, h + j, core0 + a * h + j, p)
    for x in range(n):
        f.desc[x] = (f"pod{x // (h * h)} host{x % (h * h)} HCA-1" if x < H else
                     f"edge {x - edge0}" if x < agg0 else
                     f"aggregation {x - agg0}" if x < core0 else f"core {x - core0}")
    return f


def leaf_spine(L, h, S, u, gbps=100):
    c, H = u // S, L * h
    f = Fabric(H, [1] * H + [h + u] * L + [L * c] * S, [0] * H + [1] * L + [2] * S, gbps)
    for l in range(L):
        for i in range(h):
            f.cable(l * h + i, 0, H + l, i)
        for j in range(u):
            f.cable(H + l, h + j, H + L + j % S, l * c + j // S)
    for x in range(f.nnodes):
        f.desc[x] = (f"node{x:04d} HCA-1" if x < H else
                     f"leaf {x - H}" if x < H + L else f"spine {x - H - L}")
    return f


def rail(sus, n, R, S):
    f = leaf_spine(sus * R, n, S, n, gbps=400)
    hca = [0] * (sus * n * R)
    for su in range(sus):
        for i in range(n):
            for r in range(R):
                hca[(su * n + i) * R + r] = (su * R + r) * n + i
                f.desc[(su * R + r) * n + i] = f"dgx{su * n + i:04d} mlx5_{r}"
    for l in range(sus * R):
        f.desc[f.nhosts + l] = f"su{l // R} rail{l % R} leaf"
    return f, hca


def switch_ring(n, per):
    """n switches in a ring, per hosts each: ports 0..per-1 hosts, per -> next, per+1 -> previous."""
    H = n * per
    f = Fabric(H, [1] * H + [per + 2] * n, [0] * H + [1] * n, 100)
    for s in range(n):
        for i in range(per):
            f.cable(s * per + i, 0, H + s, i)
        f.cable(H + s, per, H + (s + 1) % n, per + 1)
    for x in range(f.nnodes):
        f.desc[x] = f"ring host {x}" if x < H else f"ring switch {x - H}"
    return f


def irregular(rng, nsw):
    """A connected random fabric: a random tree of switches plus extra cables, hosts on each."""
    per = [rng.randint(1, 4) for _ in range(nsw)]
    H = sum(per)
    edges = [(rng.randrange(s), s) for s in range(1, nsw)]
    while len(edges) < nsw + nsw // 2:
        a, b = rng.sample(range(nsw), 2)
        if (a, b) not in edges and (b, a) not in edges:
            edges.append((a, b))
    deg = [per[s] + sum(1 for e in edges if s in e) for s in range(nsw)]
    f = Fabric(H, [1] * H + deg, [0] * H + [1] * nsw, 100)
    nxt = list(per)
    host = 0
    for s in range(nsw):
        for i in range(per[s]):
            f.cable(host, 0, H + s, i)
            host += 1
    for a, b in edges:
        f.cable(H + a, nxt[a], H + b, nxt[b])
        nxt[a] += 1
        nxt[b] += 1
    for x in range(f.nnodes):
        f.desc[x] = f"host {x}" if x < H else f"switch {x - H}"
    levels(f)
    return f


def levels(f):
    """Hops from the nearest host, as the harness computes them."""
    f.level = [0 if x < f.nhosts else -1 for x in range(f.nnodes)]
    frontier = list(range(f.nhosts))
    while frontier:
        nxt = []
        for a in frontier:
            for e in f.link[a]:
                if e and f.level[e[0]] < 0:
                    f.level[e[0]] = f.level[a] + 1
                    nxt.append(e[0])
        frontier = nxt


# --- files the lab's program reads ------------------------------------------------------

RATE = {100: "4xEDR", 200: "4xHDR", 400: "4xNDR"}


def write_ibnet(f, path, what):
    """The fabric as `ibnetdiscover` prints one: Switch records, then Ca records."""
    def guid(x):
        return f"{(0x0002c90300000000 if x < f.nhosts else 0x0002c90200000000) + x:016x}"

    def name(x):
        return ("H-" if x < f.nhosts else "S-") + guid(x)

    rate = RATE.get(f.gbps, "4xEDR")
    out = ["#", f"# Topology file: written by the lab14 grader ({what})", "#", ""]
    for s in range(f.nhosts, f.nnodes):
        out += ["vendid=0x2c9", "devid=0xd2f0", f"sysimgguid=0x{guid(s)}",
                f"switchguid=0x{guid(s)}({guid(s)})",
                f'Switch\t{f.nports[s]} "{name(s)}"\t\t# "{f.desc[s]}" enhanced port 0 lid '
                f'{s + 1} lmc 0']
        for p, e in enumerate(f.link[s]):
            if e is None:
                continue
            b, q = e
            peer = f'"{name(b)}"[1]({guid(b)}) ' if b < f.nhosts else f'"{name(b)}"[{q + 1}]'
            out.append(f'[{p + 1}]\t{peer}\t\t# "{f.desc[b]}" lid {b + 1} {rate}')
        out.append("")
    for x in range(f.nhosts):
        s, q = f.link[x][0]
        out += ["vendid=0x2c9", "devid=0x1021", f"sysimgguid=0x{guid(x)}", f"caguid=0x{guid(x)}",
                f'Ca\t1 "{name(x)}"\t\t# "{f.desc[x]}"',
                f'[1]({guid(x)}) \t"{name(s)}"[{q + 1}]\t\t# lid {x + 1} lmc 0 "{f.desc[s]}" '
                f'lid {s + 1} {rate}', ""]
    with open(path, "w") as fh:
        fh.write("\n".join(out))
    return path


def write_lft(f, lft, path):
    with open(path, "w") as fh:
        fh.write(f"lft {f.nnodes - f.nhosts} {f.nhosts}\n")
        for row in lft:
            fh.write(" ".join(str(p) for p in row) + "\n")
    return path


def read_x5():
    """The recorded fabric, read here only to know its node numbering and cables."""
    recs, cur = [], None
    with open(X5) as fh:
        for line in fh:
            t = line.split()
            if t and t[0] in ("Switch", "Ca"):
                cur = {"kind": t[0], "n": int(t[1]), "id": line.split('"')[1], "ports": []}
                recs.append(cur)
            elif t and line.startswith("["):
                p = int(line[1:line.index("]")])
                rest = line[line.index("]") + 1:]
                peer = rest.split('"')[1]
                pp = int(rest.split('"')[2].split("[")[1].split("]")[0])
                cur["ports"].append((p, peer, pp))
    hosts = [r["id"] for r in recs if r["kind"] == "Ca"]
    sws = [r["id"] for r in recs if r["kind"] == "Switch"]
    idx = {h: i for i, h in enumerate(hosts)}
    idx.update({s: len(hosts) + i for i, s in enumerate(sws)})
    f = Fabric(len(hosts), [1] * len(hosts) + [r["n"] for r in recs if r["kind"] == "Switch"],
               [], 32)
    for r in recs:
        if r["kind"] == "Switch":
            for p, peer, pp in r["ports"]:
                f.cable(idx[r["id"]], p - 1, idx[peer], 0 if peer[0] == "H" else pp - 1)
    levels(f)
    return f, idx


# --- the handout's routes --------------------------------------------------------------

def up_ports(f, a):
    return [p for p, e in enumerate(f.link[a]) if e and f.level[e[0]] == f.level[a] + 1]


def dmodk(f):
    H = f.nhosts
    ups = {a: up_ports(f, a) for a in range(H, f.nnodes)}
    u = {1: 0, 2: 0, 3: 0}
    for a, p in ups.items():
        if p:
            u[f.level[a]] = len(p)
    W = {1: 1, 2: max(u[1], 1), 3: max(u[1], 1) * max(u[2], 1)}
    lft = [[-1] * H for _ in range(f.nnodes - H)]
    for d in range(H):
        above = {d}                      # d is below these: reached from d going up only
        frontier = [d]
        while frontier:
            frontier = [e[0] for a in frontier for e in f.link[a]
                        if e and f.level[e[0]] == f.level[a] + 1 and e[0] not in above]
            above.update(frontier)
        down = {}
        a, q = f.link[d][0]
        down[a] = q
        while ups[a]:
            p = ups[a][(d // W[f.level[a]]) % len(ups[a])]
            b, q = f.link[a][p]
            down[b] = q
            a = b
        for s in range(H, f.nnodes):
            if s in down:
                port = down[s]
            elif s in above:
                port = next(p for p, e in enumerate(f.link[s])
                            if e and f.level[e[0]] == f.level[s] - 1 and e[0] in above)
            else:
                port = ups[s][(d // W[f.level[s]]) % len(ups[s])] if ups[s] else -1
            lft[s - H][d] = port
    return lft


def updown(f, root):
    H, N = f.nhosts, f.nnodes
    rank = {root: 0}
    frontier = [root]
    while frontier:
        nxt = []
        for a in frontier:
            for e in f.link[a]:
                if e and e[0] >= H and e[0] not in rank:
                    rank[e[0]] = rank[a] + 1
                    nxt.append(e[0])
        frontier = nxt

    def up_end(x, y):
        return (rank[x], x) < (rank[y], y)

    lft = [[-1] * H for _ in range(N - H)]
    for d in range(H):
        t, tq = f.link[d][0]
        dd = {t: 0}
        frontier = [t]
        while frontier:
            nxt = []
            for y in frontier:
                for e in f.link[y]:
                    if e and e[0] >= H and e[0] not in dd and up_end(e[0], y):
                        dd[e[0]] = dd[y] + 1
                        nxt.append(e[0])
            frontier = nxt
        da = dict(dd)
        dist = 0
        while True:
            layer = [y for y, v in da.items() if v == dist]
            if not layer and dist > max(dd.values()):
                break
            for y in layer:
                for e in f.link[y]:
                    if e and e[0] >= H and up_end(y, e[0]) and da.get(e[0], 1 << 30) > dist + 1:
                        da[e[0]] = dist + 1
            dist += 1
        for s in range(H, N):
            port = -1
            if s == t:
                port = tq
            elif dd.get(s, 0) > 0:
                port = next(p for p, e in enumerate(f.link[s]) if e and e[0] >= H and
                            up_end(s, e[0]) and dd.get(e[0]) == dd[s] - 1)
            elif da.get(s, 0) > 0:
                port = next(p for p, e in enumerate(f.link[s]) if e and e[0] >= H and
                            up_end(e[0], s) and da.get(e[0]) == da[s] - 1)
            lft[s - H][d] = port
    return lft


def minhop(f):
    """Shortest paths, lowest port first (OpenSM's min-hop without balancing): may deadlock."""
    H, N = f.nhosts, f.nnodes
    lft = [[-1] * H for _ in range(N - H)]
    for d in range(H):
        t, tq = f.link[d][0]
        dist = {t: 0}
        frontier = [t]
        while frontier:
            nxt = []
            for y in frontier:
                for e in f.link[y]:
                    if e and e[0] >= H and e[0] not in dist:
                        dist[e[0]] = dist[y] + 1
                        nxt.append(e[0])
            frontier = nxt
        for s in range(H, N):
            lft[s - H][d] = tq if s == t else next(
                p for p, e in enumerate(f.link[s]) if e and e[0] >= H and
                dist.get(e[0], -9) == dist[s] - 1)
    return lft


def ring_clockwise(f, per):
    H = f.nhosts
    lft = [[-1] * H for _ in range(f.nnodes - H)]
    for s in range(H, f.nnodes):
        for d in range(H):
            t, tq = f.link[d][0]
            lft[s - H][d] = tq if s == t else per
    return lft


def compare_routes(f, want, got, what):
    """The student's entries must equal the rule's at every switch a route of the rule
    passes: then every route is the same, pair for pair."""
    H = f.nhosts
    for d in range(H):
        todo = [f.link[s][0][0] for s in range(H) if s != d]
        seen = set()
        while todo:
            s = todo.pop()
            if s in seen or s < H:
                continue
            seen.add(s)
            w, g = want[s - H][d], got[(s - H) * H + d]
            if w != g:
                raise CheckFailed(f"{what}: switch {s} forwards host {d}'s packets out of the "
                                  f"wrong port", expected=f"port {w} (toward node "
                                  f"{f.link[s][w][0] if w >= 0 else '-'})", found=f"port {g}")
            if w >= 0 and f.link[s][w]:
                todo.append(f.link[s][w][0])


def expect_routes_sound(row, what):
    expect(f"{what}: status", row["status"], "success")
    if row["delivered"] != row["pairs"]:
        raise CheckFailed(f"{what}: routes that do not arrive", expected=f"all {row['pairs']} "
                          "pairs delivered", found=f"{row['delivered']}; {row['bad_route']}")
    expect(f"{what}: channel dependency graph acyclic (checked by the harness)",
           row["acyclic"], 1)


# --- checks -----------------------------------------------------------------------------

def build_cases(rng):
    ks = [2, 4, rng.choice([6, 8]), rng.choice([10, 12])]
    leafspines = [(rng.randint(2, 8), h, s, s * rng.randint(1, 3))
                  for h, s in ((rng.choice([8, 16, 24]), rng.choice([2, 4])),
                               (rng.choice([12, 20, 32]), rng.choice([1, 3, 4])))]
    rails = [(2, 32, 8, 8)]
    while len(rails) < 2:
        sus, n, r, s = rng.randint(1, 3), rng.choice([8, 16]), rng.choice([2, 4, 8]), \
            rng.choice([2, 4, 8])
        if sus * r * (n // s) <= 64:
            rails.append((sus, n, r, s))
    return ks, leafspines, rails


def expect_fabric(row, want, what):
    expect(f"{what}: status", row["status"], "success")
    expect(f"{what}: the harness's check of your fabric", row["valid"], "yes")
    expect(f"{what}: hosts", row["hosts"], want.nhosts)
    expect(f"{what}: switches", row["switches"], want.nnodes - want.nhosts)
    expect(f"{what}: nodes whose level differs from their hops to the nearest host",
           row["levels_off"], 0)
    if row["nports"] != want.nports:
        bad = next(x for x in range(want.nnodes) if row["nports"][x] != want.nports[x])
        raise CheckFailed(f"{what}: node {bad}'s port count", expected=str(want.nports[bad]),
                          found=str(row["nports"][bad]))
    k = 0
    for a in range(want.nnodes):
        for p in range(want.nports[a]):
            e = want.link[a][p] or (-1, -1)
            got = (row["links"][k], row["links"][k + 1])
            k += 2
            if got != tuple(e):
                raise CheckFailed(f"{what}: node {a} ({want.desc[a]}) port {p}",
                                  expected=f"cabled to node {e[0]} port {e[1]}" if e[0] >= 0
                                  else "no cable", found=f"node {got[0]} port {got[1]}")


@lab.check("sim.build", "Fat trees, leaf-spines and rail fabrics cabled as specified",
           points=15, backend="sim")
def sim_build(ctx):
    rng = random.Random()
    ks, leafspines, rails = build_cases(rng)
    cases = [dict(kind="fattree", k=k) for k in ks]
    cases += [dict(kind="leafspine", leaves=L, hosts=h, spines=s, uplinks=u)
              for L, h, s, u in leafspines]
    cases += [dict(kind="rail", sus=a, nodes=n, rails=r, spines=s) for a, n, r, s in rails]
    bad = [dict(kind="fattree", k=5), dict(kind="leafspine", leaves=4, hosts=8, spines=3,
                                               uplinks=4)]
    rows = ctx.run_cases("build", cases + bad)
    for case, row in zip(cases, rows):
        what = " ".join(f"{k}={v}" for k, v in case.items())
        if case["kind"] == "fattree":
            expect_fabric(row, fat_tree(case["k"]), what)
        elif case["kind"] == "leafspine":
            expect_fabric(row, leaf_spine(case["leaves"], case["hosts"], case["spines"],
                                          case["uplinks"]), what)
        else:
            want, hca = rail(case["sus"], case["nodes"], case["rails"], case["spines"])
            expect_fabric(row, want, what)
            expect(f"{what}: where each server's HCAs are (hca[])", row.get("hca"), hca)
    for case, row in zip(bad, rows[len(cases):]):
        expect(f"status for {case}", row["status"], "invalid argument")
    ctx.metric("fabrics", len(cases))


@lab.check("sim.dmodk", "D-mod-K: every route as Zahavi's rule gives it, deadlock-free",
           points=15, backend="sim")
def sim_dmodk(ctx):
    rng = random.Random()
    L = rng.choice([4, 6, 8])
    fabrics = [("fat tree k=4", fat_tree(4)), ("fat tree k=8", fat_tree(8)),
               (f"leaf-spine {L}x16, 2:1", leaf_spine(L, 16, 4, 8)),
               ("DGX SuperPOD, 2 SU", rail(2, 32, 8, 8)[0])]
    cases = []
    for i, (what, f) in enumerate(fabrics):
        cases.append(dict(fabric=write_ibnet(f, ctx.out(f"dmodk{i}.topo"), what), algo="dmodk"))
    rows = ctx.run_cases("route", cases)
    for (what, f), row in zip(fabrics, rows):
        expect_routes_sound(row, what)
        compare_routes(f, dmodk(f), row["lft"], what)
        expect(f"{what}: switches on the longest route", row["max_hops"],
               2 * max(f.level) - 1)


@lab.check("sim.updown", "Up*/down* on the recorded X5 fabric and random irregular ones",
           points=15, backend="sim")
def sim_updown(ctx):
    rng = random.Random()
    x5, idx = read_x5()
    fabrics = [(f"X5 root {s}", x5, X5, idx[s]) for s in X5_SPINES]
    for i in range(2):
        f = irregular(rng, rng.randint(6, 14))
        root = rng.randrange(f.nhosts, f.nnodes)
        fabrics.append((f"irregular fabric {i} root {root}", f,
                        write_ibnet(f, ctx.out(f"irregular{i}.topo"), "random irregular"), root))
    rows = ctx.run_cases("route", [dict(fabric=p, algo="updown", root=r)
                                   for _, _, p, r in fabrics])
    for (what, f, _, root), row in zip(fabrics, rows):
        expect_routes_sound(row, what)
        compare_routes(f, updown(f, root), row["lft"], what)


@lab.check("sim.deadlock", "Channel dependency cycles found, with a cycle that exists",
           points=15, backend="sim")
def sim_deadlock(ctx):
    rng = random.Random()
    x5, idx = read_x5()
    n = rng.randint(3, 6)
    ring = switch_ring(n, 2)
    ring_path = write_ibnet(ring, ctx.out("ring.topo"), f"a ring of {n} switches")
    broken = ring_clockwise(ring, 2)
    s = rng.randrange(n)
    d = (2 * ((s + 1) % n))           # a host on the next switch: send it back and forth
    broken[s][d] = 2                   # s sends it on...
    broken[(s + 1) % n][d] = 3         # ...and the next switch sends it back
    cases = [("X5, up*/down*", X5, updown(x5, idx[X5_SPINES[0]]), x5),
             ("X5, min-hop", X5, minhop(x5), x5),
             (f"ring of {n}, clockwise", ring_path, ring_clockwise(ring, 2), ring)]
    for i in range(2):
        f = irregular(rng, rng.randint(8, 14))
        cases.append((f"irregular {i}, min-hop", write_ibnet(f, ctx.out(f"irr{i}.topo"), "random"),
                      minhop(f), f))
    cases.append(("ring, a loop between two switches", ring_path, broken, ring))
    rows = ctx.run_cases("deadlock", [
        dict(fabric=p, routes=write_lft(f, lft, ctx.out(f"routes{i}.lft")))
        for i, (_, p, lft, f) in enumerate(cases)])
    cyclic = 0
    for (what, *_), row in zip(cases[:-1], rows[:-1]):
        expect(f"{what}: status", row["status"], "success")
        want = row["harness_acyclic"]
        cyclic += not want
        expect(f"{what}: deadlock-free (the harness found {'no ' if want else 'a '}cycle)",
               row["acyclic"], want)
        if not want:
            expect(f"{what}: your cycle is one (every channel depends on the next)",
                   row["cycle_valid"], "yes")
    ctx.metric("cyclic_cases", cyclic)
    expect("a table with a routing loop: status", rows[-1]["status"], "invalid argument")


@lab.check("sim.loads", "Link loads of ring, shift and AlltoAll exact; the hot spot",
           points=15, backend="sim")
def sim_loads(ctx):
    rng = random.Random()
    x5, idx = read_x5()
    ft = fat_tree(4)
    ft_path = write_ibnet(ft, ctx.out("ft4.topo"), "fat tree k=4")
    ft_lft = write_lft(ft, dmodk(ft), ctx.out("ft4.lft"))
    x5_lft = write_lft(x5, updown(x5, idx[X5_SPINES[0]]), ctx.out("x5.lft"))
    sp, _ = rail(2, 32, 8, 8)
    sp_path = write_ibnet(sp, ctx.out("superpod.topo"), "DGX SuperPOD 2 SU")
    sp_lft = write_lft(sp, dmodk(sp), ctx.out("superpod.lft"))
    lo = rng.randrange(0, 200)
    cases = [dict(fabric=ft_path, routes=ft_lft, pattern="ring"),
             dict(fabric=ft_path, routes=ft_lft, pattern="shift", shift=rng.randint(2, 15)),
             dict(fabric=ft_path, routes=ft_lft, pattern="alltoall", bytes=rng.randint(1, 9) * 1e6),
             dict(fabric=X5, routes=x5_lft, pattern="shift", shift=-rng.randint(1, 40)),
             dict(fabric=X5, routes=x5_lft, pattern="alltoall", bytes=1e6),
             dict(fabric=sp_path, routes=sp_lft, pattern="ring", hosts=f"{lo}-{lo + 300}")]
    rows = ctx.run_cases("loads", cases)
    for case, row in zip(cases, rows):
        what = f"{case['pattern']} on {os.path.basename(case['fabric'])}"
        expect(f"{what}: status", row["status"], "success")
        expect(f"{what}: flows differing from the pattern", row["flows_off"], 0)
        expect(f"{what}: channels whose load differs from the harness's", row["loads_off"], 0)
    x5_all = rows[4]
    ctx.metric("x5_alltoall_hot_spot_MB", x5_all["max_load"] / 1e6)
    plot_fabric(ctx, "lab14-x5-alltoall", x5_all["level"], cables_of(x5_all),
                "lab14: AlltoAll of 1 MB per pair on the X5 fabric, up*/down* routes", unit="B")


# --- the decision ------------------------------------------------------------------------

def leafspine_scenario(rng):
    """Leaves of 16 hosts, 8 uplinks (2:1). In every leaf a few hosts are free; each free
    host's twin (the other host of its uplink class, d mod 8) is busy and receives another
    job's traffic across the spines, so D-mod-K's down cable to any free host is taken."""
    L, S = rng.choice([6, 8]), rng.choice([2, 4])
    f = leaf_spine(L, 16, S, 8)
    free, busy, bg = [], set(range(f.nhosts)), []
    twins = []
    for l in range(L):
        for r in rng.sample(range(8), rng.randint(2, 3)):
            pick = rng.choice([0, 1])
            h, twin = l * 16 + r + 8 * pick, l * 16 + r + 8 * (1 - pick)
            free.append(h)
            busy.discard(h)
            twins.append((l, twin))
    for k, (l, twin) in enumerate(twins):
        other = (l + 1 + k % (L - 1)) % L
        src = rng.choice([b for b in busy if b // 16 == other])
        bg.append((src, twin))
    most = max(sum(1 for h in free if h // 16 == l) for l in range(L))
    return f, dict(servers=rng.randint(most + 1, min(len(free), 12)), rails=1,
                   hca=list(range(f.nhosts)), busy=sorted(busy), bg=bg)


def rail_scenario(rng):
    """Rail-optimised units of 16 servers. Each unit has a few free servers, with distinct
    indices across units; every rail leaf sends another job's flows to servers of those
    indices in a third unit, so D-mod-K's uplink towards any free server is taken."""
    n = 16
    U, R, S = rng.choice([(U, R, S) for U in (3, 4) for R in (2, 4) for S in (2, 4, 8)
                          if U * R * (n // S) <= 64])      # a spine has 64 ports
    f, hca = rail(U, n, R, S)
    idx = rng.sample(range(n), U * 3)
    free_of = {u: idx[3 * u:3 * u + rng.randint(2, 3)] for u in range(U)}
    busy = [su * n + i for su in range(U) for i in range(n) if i not in free_of[su]]
    bg = []
    for a in range(U):
        srcs = [i for i in range(n) if i not in free_of[a]]
        k = 0
        for b in range(U):
            if b == a:
                continue
            for i in free_of[b]:
                c = next(x for x in range(U) if x not in (a, b))
                for r in range(R):
                    src = (a * R + r) * n + srcs[k % len(srcs)]
                    bg.append((src, (c * R + r) * n + i))
                k += 1
    most = max(len(v) for v in free_of.values())
    total = sum(len(v) for v in free_of.values())
    return f, dict(servers=rng.randint(most + 1, min(total, 10)), rails=R, hca=hca,
                   busy=busy, bg=bg)


def write_job(job, path):
    with open(path, "w") as fh:
        fh.write(f"servers {job['servers']}\nrails {job['rails']}\nbytes {GiB // 4}\n")
        fh.write("hca " + " ".join(map(str, job["hca"])) + "\n")
        fh.write("busy " + " ".join(map(str, job["busy"])) + "\n")
        for s, d in job["bg"]:
            fh.write(f"bg {s} {d}\n")
    return path


@lab.check("sim.plan", "Placement and routes: the job's AllReduce as fast as the fabric allows",
           points=20, backend="sim", kind="performance", timeout=90)
def sim_plan(ctx):
    rng = random.Random()
    scenarios = [("leaf-spine 2:1", *leafspine_scenario(rng)),
                 ("leaf-spine 2:1", *leafspine_scenario(rng)),
                 ("rail-optimised", *rail_scenario(rng)),
                 ("rail-optimised", *rail_scenario(rng))]
    cases = []
    for i, (what, f, job) in enumerate(scenarios):
        cases.append(dict(fabric=write_ibnet(f, ctx.out(f"plan{i}.topo"), what),
                          job=write_job(job, ctx.out(f"plan{i}.job"))))
    rows = ctx.run_cases("plan", cases)
    times, ideal, naive = [], [], []
    for (what, f, job), row in zip(scenarios, rows):
        what = f"{what}, {job['servers']} servers"
        expect(f"{what}: status", row["status"], "success")
        expect(f"{what}: placement", row["placement"], "valid")
        expect_routes_sound(row, what)
        times.append(row["time_s"])
        ideal.append(row["ideal_s"])
        naive.append(row["naive_s"])
    ctx.metric("max_flows_per_channel", [r["max_flows"] for r in rows])
    ctx.metric("first_free_servers_vs_bound", [round(i / n, 3) for i, n in zip(ideal, naive)])
    best = min(range(len(rows)), key=lambda i: rows[i]["max_flows"])
    row = rows[best]
    plot_fabric(ctx, "lab14-plan", row["level"], cables_of(row),
                f"lab14: {scenarios[best][0]}, your job's ring (thick) and the other jobs' "
                "flows, bytes per ring step (2x: two flows on one cable)",
                thick=[i for i, (x, y) in enumerate(zip(row["job_ab"], row["job_ba"])) if x or y])
    # The bound: every ring flow alone at its cable's rate. The reference reaches it in
    # every scenario this grader draws; a first-free placement reaches about half.
    perf_samples(ctx, student=times, baseline=ideal, higher_is_better=False, low=0.6,
                 high=0.95, unit="s", name="AllReduce time (simulated)")


# --- 思考 --------------------------------------------------------------------------------

def ecmp_expected_max(flows, links):
    """E[max load] of `flows` balls thrown uniformly into `links` bins, exactly: the sum over
    m of P(max > m), counting the assignments whose every bin holds at most m."""
    from math import comb

    def at_most(m):
        ways = [1] + [0] * flows          # ways[b]: b balls placed in the bins so far
        for _ in range(links):
            ways = [sum(comb(b, k) * ways[b - k] for k in range(0, min(m, b) + 1))
                    for b in range(flows + 1)]
        return ways[flows]

    total = links ** flows
    return sum((total - at_most(m)) / total for m in range(flows))


ANSWERS = [("ecmp_max_load_8x8", "思考 4: flows on the busiest of 8 uplinks, 8 flows hashed "
            "uniformly (ECMP)", lambda: ecmp_expected_max(8, 8), 0.05)]


@lab.check("cpu.answers", "思考: ECMP collisions (answers.txt)", points=5, backend="cpu",
           kind="question")
def cpu_answers(ctx):
    given = answers.read_answers(ctx)
    for key, what, value, tol in ANSWERS:
        got = answers.answer_number(given, key)
        want = value()
        if not abs(got - want) <= tol:
            raise CheckFailed(f"{key}: {what}", expected=f"{want:.4g} (within {tol})",
                              found=f"{got:g}")
