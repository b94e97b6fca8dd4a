"""Shared helpers for the harness tests: fixture roots, running ./grade, process scans."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GRADER = os.path.join(REPO, "grader")
FIXTURES = os.path.join(HERE, "fixtures")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
HAVE_MPI = shutil.which("mpirun") is not None and shutil.which("mpicc") is not None

if GRADER not in sys.path:
    sys.path.insert(0, GRADER)


def make_root(add_cleanup):
    """Copies the fixture tree into a fresh temporary root; add_cleanup (a test's
    addCleanup or addClassCleanup) removes it afterwards."""
    tmp = tempfile.mkdtemp(prefix="commlab-grade-")
    root = os.path.join(tmp, "repo")
    shutil.copytree(FIXTURES, root, ignore=shutil.ignore_patterns("build", "__pycache__"))
    add_cleanup(shutil.rmtree, tmp, True)
    return root


def grade(root, *args, env=None, backends=None):
    """Runs grader/grade.py on a fixture root and returns the CompletedProcess."""
    full = dict(os.environ)
    full["COMMLAB_GRADE_BACKENDS"] = backends or ("cpu,sim" if HAVE_MPI else "sim")
    full.pop("COMMLAB_GRADE_CWD", None)
    full["COMMLAB_GRADE_KEEP_ENV"] = "FAKE_WRONG"     # the fixture program reads it
    # the fake labs time nothing: their own queue, not behind other graders of the machine
    full["COMMLAB_ADMISSION_DIR"] = os.path.join(root, ".admission")
    full.update(env or {})
    argv = [PYTHON, os.path.join(GRADER, "grade.py"), "--root", root, "--no-install"]
    return subprocess.run(argv + list(args), capture_output=True, text=True, env=full,
                          cwd=root, timeout=120)


def grade_json(root, *args, **kw):
    """Runs grade with --json and returns (CompletedProcess, parsed results, {id: test})."""
    path = os.path.join(root, "results.json")
    if os.path.exists(path):
        os.remove(path)
    res = grade(root, *args, "--json", path, **kw)
    if not os.path.exists(path):
        raise AssertionError(f"no results.json written:\n{res.stdout}\n{res.stderr}")
    with open(path) as f:
        data = json.load(f)
    return res, data, {t["id"]: t for t in data["tests"]}


def live_processes_with(marker):
    """Returns pids of non-zombie processes whose command line contains marker."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z":
            pids.append(int(pid))
    return pids
