"""Plots for the report: writes data files and draws a png with gnuplot when it exists."""

import os
import shutil
import subprocess

NOT_INSTALLED = "plot skipped: gnuplot not installed"


def _terminal():
    """Returns 'pngcairo' when gnuplot supports it, else 'png'."""
    try:
        r = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"], capture_output=True,
                           timeout=10, stdin=subprocess.DEVNULL)
        return "pngcairo" if r.returncode == 0 else "png"
    except (OSError, subprocess.TimeoutExpired):
        return "png"


def _quote(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def script(png, data, series, xlabel, ylabel, logx, logy, title, terminal):
    """Returns the gnuplot script drawing each series (one data block each) into png."""
    lines = [f"set terminal {terminal} size 900,600",
             f"set output {_quote(png)}",
             f"set title {_quote(title)} noenhanced",
             f"set xlabel {_quote(xlabel)} noenhanced",
             f"set ylabel {_quote(ylabel)} noenhanced",
             "set key left top noenhanced",
             "set grid"]
    if logx:
        lines.append("set logscale x 2")
        lines.append("set format x \"%.0s%c\"")  # 1k, 1M instead of 1.04858x10^6
    if logy:
        lines.append("set logscale y")
    plots = [f"{_quote(data)} index {i} using 1:2 with linespoints title {_quote(label)}"
             for i, label in enumerate(series)]
    lines.append("plot " + ", \\\n     ".join(plots))
    return "\n".join(lines) + "\n"


def plot(report_dir, name, series, xlabel, ylabel, logx, logy, title):
    """Writes <report_dir>/<name>.dat and draws <name>.png.

    Returns (png path or None, one line for the report). Never raises for a gnuplot problem.
    """
    os.makedirs(report_dir, exist_ok=True)
    data = os.path.join(report_dir, name + ".dat")
    png = os.path.join(report_dir, name + ".png")
    with open(data, "w") as f:
        for label, points in series.items():
            f.write(f"# {label}\n")
            for x, y in points:
                f.write(f"{x} {y}\n")
            f.write("\n\n")
    if shutil.which("gnuplot") is None:
        return None, NOT_INSTALLED
    text = script(png, data, series, xlabel, ylabel, logx, logy, title, _terminal())
    try:
        r = subprocess.run(["gnuplot"], input=text.encode(), capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"plot {name} failed: {e}"
    if r.returncode != 0 or not os.path.isfile(png):
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        return None, f"plot {name} failed: {err[0]}"
    return png, f"plot: {png}"
