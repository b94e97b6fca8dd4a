"""The net backend: ctx.netrun runs MPI across emulated nodes (network namespaces, tbf links)."""

import itertools
import os
import shutil
import subprocess

from .mpi import MPI_ENV
from .timer import TIMER

_SEQ = itertools.count(1)
NETNS_TOOLS = ("ip", "tc", "unshare", "mpirun")


def script_path(root):
    """Returns the path of scripts/netns/netns.sh under the repository root."""
    return os.path.join(root, "scripts", "netns", "netns.sh")


def _quiet(argv, timeout=30):
    try:
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        pass


def cleanup_stale(root):
    """Removes namespace sets left by runs whose process is gone (netns.sh cleanup)."""
    _quiet([script_path(root), "cleanup"])


def netrun(ctx, args, nodes=2, ranks_per_node=1, rate="1gbit", rails=1, timeout=None,
           env=None, check=True, mpi_args=(), program=None, burst=None, red=None):
    """Runs `mpirun [mpi_args] <program> args...` across `nodes` namespace nodes with
    `ranks_per_node` ranks each, every node joined to a switch by `rails` veth links shaped to
    `rate` (tbf; "none" leaves them unshaped; "200mbit,100mbit" one rate per rail) with tbf's
    `burst` (netns.sh's default when None; a small burst, e.g. "32kb", when a check measures
    a rail's rate on a few megabytes), and returns its Result as ctx.mpirun does.

    The nodes are created for this call and removed afterwards, also on failure, timeout or
    Ctrl-C. Ranks reach each other over TCP (eth0..eth<rails-1>, 10.77.<rail>.<node+1>);
    latency cannot be added here (no netem), a lab that needs it adds it in user space.
    red="MIN:MAX:PROB" makes the switch's port towards node 0 a congestion point: RED with ECN
    marking (bytes, bytes, probability at MAX) under its tbf; the kernel needs sch_red.
    Calls ctx.skip when a tool is missing or the script is absent.
    """
    script = script_path(ctx.root)
    if not os.path.isfile(script):
        ctx.skip(f"{os.path.relpath(script, ctx.root)} not found")
    missing = [t for t in NETNS_TOOLS if shutil.which(t) is None]
    if missing:
        ctx.skip(f"net backend needs {', '.join(missing)}")
    prog = program or ctx.program
    tag = f"clnet{os.getpid()}x{next(_SEQ)}"
    argv = [script, "mpirun", "--nodes", str(nodes), "--ranks-per-node", str(ranks_per_node),
            "--rate", str(rate), "--rails", str(rails)]
    if red:
        argv += ["--red", red]
    if burst:
        argv += ["--burst", str(burst)]
    argv += ["--"]
    argv += [str(a) for a in mpi_args] + [prog] + [str(a) for a in args]
    shown = dict(MPI_ENV)
    shown.update(env or {})
    full = dict(shown, COMMLAB_NETNS_TAG=tag)
    with TIMER.critical():
        cleanup_stale(ctx.root)
    ctx.log(f"net: {nodes} node(s) x {ranks_per_node} rank(s), {rails} rail(s) at {rate}")
    try:
        return ctx.run(argv, timeout=timeout, env=full, check=check, shown_env=shown)
    finally:
        with TIMER.critical():
            _quiet([script, "down", "--tag", tag])
