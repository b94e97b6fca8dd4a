"""Builds the lab with make and finds the binary; turns compiler output into a message."""

import os
import re
import shutil
from dataclasses import dataclass

from . import runner, sandbox

BUILD_TIMEOUT = 600
_ERR = re.compile(r"(error|undefined reference|No rule to make target)", re.I)


@dataclass
class Build:
    """The outcome of building a lab: where the binary is, or why there is none."""

    ok: bool
    program: str
    command: str
    message: str = ""
    elapsed: float = 0.0
    output: str = ""          # everything make printed (kept in build/grade/<lab>/build.log)


BUILD_DIR_ENV = "COMMLAB_GRADE_BUILD"     # another build folder (e.g. one made with MPI=no)


def build_dir(official=False):
    """The build folder, relative to the root: $COMMLAB_GRADE_BUILD (not in official
    grading), else build-san with sanitizers, else build."""
    custom = os.environ.get(BUILD_DIR_ENV, "").strip().strip("/")
    if custom and not official and "/" not in custom and custom not in (".", ".."):
        return custom
    return "build-san" if sanitizers() else "build"


def plan(root, lab, program, solution=False, source=None, out_dir=None, official=False):
    """Returns (make argv, binary path) for the build mode.

    Default: make -s <lab> -> build/labs/<lab>/<program>; solution: make -s solution-<lab>
    -> build/solutions/<lab>/<program>; source DIR: make -s <lab> STUDENT_DIR=DIR
    LAB_OUT=<out_dir> -> <out_dir>/<program>. Another build folder (build_dir()) is
    passed to make as BUILD=.
    """
    san = ["SAN=1"] if sanitizers() else []
    bdir = build_dir(official)
    if bdir not in ("build", "build-san"):
        san.append(f"BUILD={bdir}")
    if source:
        argv = ["make", "-s", lab, f"STUDENT_DIR={os.path.abspath(source)}",
                f"LAB_OUT={out_dir}"] + san
        return argv, os.path.join(out_dir, program)
    if solution:
        return (["make", "-s", f"solution-{lab}"] + san,
                os.path.join(root, bdir, "solutions", lab, program))
    return ["make", "-s", lab] + san, os.path.join(root, bdir, "labs", lab, program)


def sanitizers():
    """True when COMMLAB_GRADE_SAN=1: build with `make SAN=1` (ASan and UBSan, into
    build-san/) and grade that build."""
    return os.environ.get("COMMLAB_GRADE_SAN") == "1"


def slowdown():
    """How much longer than its limits a check may take: instrumented programs run a few
    times slower, and the sanitizer suite asks about memory, not time."""
    return 3.0 if sanitizers() else 1.0


def first_errors(text, n=12):
    """Returns the first n lines that look like compiler or make errors (with the line
    before each as context), or the last n lines when none does."""
    lines = text.splitlines()
    picked = []
    for i, line in enumerate(lines):
        if _ERR.search(line):
            if i > 0 and lines[i - 1] not in picked and not _ERR.search(lines[i - 1]):
                picked.append(lines[i - 1])
            picked.append(line)
        if len(picked) >= n:
            break
    return "\n".join(picked[:n] if picked else lines[-n:])


def build(root, lab, program, workdir, solution=False, source=None, echo=None, official=False):
    """Runs the build, jailed like the checks (sandbox.build_limits), and returns a Build;
    never raises for a failed build."""
    out_dir = os.path.join(workdir, "_build") if source else None
    argv, binary = plan(root, lab, program, solution, source, out_dir, official)
    command = runner.repro_line(argv, root)
    if shutil.which("make") is None:
        return Build(False, binary, command, "make not found on PATH")
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    os.makedirs(workdir, exist_ok=True)
    bdir = os.path.join(root, build_dir(official))
    os.makedirs(bdir, exist_ok=True)
    limits = sandbox.build_limits(root, solution, official, [bdir])
    res = runner.run(argv, cwd=root, workdir=workdir, timeout=BUILD_TIMEOUT, root=root,
                     echo=echo, limits=limits)
    text = (res.stdout + "\n" + res.stderr).strip()
    if res.timed_out:
        return Build(False, binary, command, f"build timed out after {BUILD_TIMEOUT} s",
                     res.elapsed, text)
    if res.rc != 0:
        return Build(False, binary, command,
                     f"build failed (exit {res.rc}):\n{first_errors(text)}", res.elapsed, text)
    if not os.path.isfile(binary):
        rel = os.path.relpath(binary, root)
        return Build(False, binary, command, f"build succeeded but {rel} was not produced",
                     res.elapsed, text)
    return Build(True, binary, command, "", res.elapsed, text)
