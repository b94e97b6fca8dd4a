"""Pictures of a switched fabric: switches and hosts by level, every cable coloured by its load.

plot_fabric(ctx, name, level, cables, title) draws build/grade/<lab>/<name>.png with gnuplot:
hosts along the bottom, each level of switches above, one segment per cable whose colour is
the larger of its two directions' loads (grey: idle, yellow to red: busier); the cables in
`thick` (indices) are drawn thick, e.g. those one job uses. Labs that hand a fabric to the
student (lab14) report its levels and per-cable loads.
"""

import os
import shutil
import subprocess

from .plot import NOT_INSTALLED, _quote, _terminal


def layout(level):
    """Returns (x, y) per node: each level spread evenly over [0, 1], levels one unit apart."""
    rows = {}
    for node, lv in enumerate(level):
        rows.setdefault(lv, []).append(node)
    pos = [(0.0, 0.0)] * len(level)
    for lv, nodes in rows.items():
        for i, node in enumerate(nodes):
            pos[node] = ((i + 0.5) / len(nodes), float(max(lv, 0)))
    return pos


def plot_fabric(ctx, name, level, cables, title, unit="bytes", thick=()):
    """cables: [(a, b, load_a_to_b, load_b_to_a), ...]. Returns the png path or None."""
    os.makedirs(ctx.report_dir, exist_ok=True)
    data = os.path.join(ctx.report_dir, name + ".dat")
    png = os.path.join(ctx.report_dir, name + ".png")
    pos = layout(level)
    top = max((max(ab, ba) for _, _, ab, ba in cables), default=0) or 1
    with open(data, "w") as f:
        f.write("# x1 y1 dx dy load (max of both directions, of the busiest cable)\n")
        thick = set(thick)
        order = sorted(range(len(cables)), key=lambda i: max(cables[i][2], cables[i][3]))
        for block in (False, True):
            for i in order:
                if (i in thick) != block:
                    continue
                a, b, ab, ba = cables[i][:4]
                (x1, y1), (x2, y2) = pos[a], pos[b]
                f.write(f"{x1:.5f} {y1:.5f} {x2 - x1:.5f} {y2 - y1:.5f} "
                        f"{max(ab, ba) / top:.5f}\n")
            f.write("\n\n")
        for node, (x, y) in enumerate(pos):
            f.write(f"{x:.5f} {y:.5f} {1 if level[node] == 0 else 2}\n")
    note = f"plot: {png}"
    if shutil.which("gnuplot") is None:
        ctx.plots.append(NOT_INSTALLED)
        return None
    script = "\n".join([
        f"set terminal {_terminal()} size 1200,700",
        f"set output {_quote(png)}",
        f"set title {_quote(title)} noenhanced",
        "unset xtics", "unset key", "unset border",
        "set ytics ('hosts' 0, 'leaf/edge' 1, 'spine/aggregation' 2, 'core' 3)",
        f"set yrange [-0.3:{max(level) + 0.3}]", "set xrange [-0.02:1.02]",
        "set palette defined (0 '#dddddd', 0.001 '#ffe08a', 0.5 '#f59a23', 1 '#c0001a')",
        "set cbrange [0:1]", f"set cblabel {_quote(f'load / busiest cable ({top:.4g} {unit})')}",
        f"plot {_quote(data)} index 0 using 1:2:3:4:5 with vectors nohead lw 1.5 lc palette, \\",
        f"     {_quote(data)} index 1 using 1:2:3:4:5 with vectors nohead lw 4 lc palette, \\",
        f"     {_quote(data)} index 2 using 1:2:($3*0.4) with points pt 7 ps variable lc rgb '#333333'",
    ]) + "\n"
    try:
        r = subprocess.run(["gnuplot"], input=script.encode(), capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        ctx.plots.append(f"plot {name} failed: {e}")
        return None
    if r.returncode != 0 or not os.path.isfile(png):
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        ctx.plots.append(f"plot {name} failed: {err[0]}")
        return None
    ctx.plots.append(note.replace(ctx.root.rstrip("/") + "/", ""))
    return png


def cables_of(row):
    """The cables of a lab14-style row (cable_a, cable_b, load_ab, load_ba columns)."""
    return list(zip(row["cable_a"], row["cable_b"], row["load_ab"], row["load_ba"]))
