"""Timeline pictures for the report: one row per rank, one bar per operation, coloured by kind
(a pipeline schedule's forwards and backwards, a step's compute and communication)."""

import os
import shutil
import subprocess

from . import plot as plotmod

COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948"]


def script(png, data, kinds, rows, xlabel, title, terminal):
    """The gnuplot script drawing each kind's bars (one data block each) into png."""
    lines = [f"set terminal {terminal} size 1000,{200 + 40 * rows}",
             f"set output {plotmod._quote(png)}",
             f"set title {plotmod._quote(title)} noenhanced",
             f"set xlabel {plotmod._quote(xlabel)} noenhanced",
             "set ylabel \"rank\"",
             f"set yrange [{rows - 0.5}:-0.5]",
             "set ytics 1",
             "set key outside right top noenhanced",
             "set grid xtics",
             "set style fill solid 0.9 border lc rgb \"black\""]
    plots = [f"{plotmod._quote(data)} index {i} using (($2+$3)/2):1:2:3:($1-0.4):($1+0.4) "
             f"with boxxyerror lc rgb \"{COLOURS[i % len(COLOURS)]}\" title {plotmod._quote(k)}"
             for i, k in enumerate(kinds)]
    plots += [f"{plotmod._quote(data)} index {len(kinds)} using (($2+$3)/2):1:4 with labels "
              "font \",8\" notitle"]
    lines.append("plot " + ", \\\n     ".join(plots))
    return "\n".join(lines) + "\n"


def gantt(ctx, name, bars, xlabel="time (ms)", title=None):
    """Draws bars [(rank, start, end, kind, label), ...] to build/grade/<lab>/<name>.png, one
    colour per kind (in order of first appearance), the label written on each bar. Returns the
    png path, or None when gnuplot is missing or fails (the report says which)."""
    os.makedirs(ctx.report_dir, exist_ok=True)
    data = os.path.join(ctx.report_dir, name + ".dat")
    png = os.path.join(ctx.report_dir, name + ".png")
    kinds = list(dict.fromkeys(b[3] for b in bars))
    rows = 1 + max((b[0] for b in bars), default=0)
    with open(data, "w") as f:
        for k in kinds:
            f.write(f"# {k}\n")
            for r, t0, t1, kind, _ in bars:
                if kind == k:
                    f.write(f"{r} {t0} {t1}\n")
            f.write("\n\n")
        f.write("# labels\n")
        for r, t0, t1, _, label in bars:
            f.write(f"{r} {t0} {t1} {label}\n")
        f.write("\n\n")
    note, path = plotmod.NOT_INSTALLED, None
    if shutil.which("gnuplot") is not None and bars:
        text = script(png, data, kinds, rows, xlabel, title or name, plotmod._terminal())
        try:
            r = subprocess.run(["gnuplot"], input=text.encode(), capture_output=True, timeout=30)
            if r.returncode == 0 and os.path.isfile(png):
                note, path = f"plot: {png}", png
            else:
                err = r.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
                note = f"plot {name} failed: {err[0]}"
        except (OSError, subprocess.TimeoutExpired) as e:
            note = f"plot {name} failed: {e}"
    ctx.plots.append(note.replace(ctx.root.rstrip("/") + "/", ""))
    return path
