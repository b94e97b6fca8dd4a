"""Shared helpers for the cluster tests: a fixture root, a private Slurm, running ./grade."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
PYTHON = "/usr/bin/python3"
SLURM_SH = os.path.join(REPO, "scripts", "slurm", "slurm.sh")
NETNS_SH = os.path.join(REPO, "scripts", "netns", "netns.sh")
PERF_LOCK = "/tmp/commlab-perf.lock"
SLURM_PACKAGES = ["slurm-wlm", "munge"]


def require_root(case):
    """Skips the test case unless it runs as root with ip netns usable."""
    if os.geteuid() != 0:
        raise unittest.SkipTest("needs root (network namespaces, Slurm daemons)")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        raise unittest.SkipTest("needs iproute2 (ip, tc)")


def ensure_slurm():
    """Installs slurm-wlm and munge with apt-get when missing (CI runs as root); raises
    SkipTest when that is impossible."""
    if all(shutil.which(c) for c in ("slurmctld", "slurmd", "munged", "sbatch")):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise unittest.SkipTest("Slurm is not installed: apt-get install -y slurm-wlm munge")
    r = subprocess.run(["sh", "-c", "apt-get update -q && DEBIAN_FRONTEND=noninteractive "
                        "apt-get install -y -q " + " ".join(SLURM_PACKAGES)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or not shutil.which("slurmctld"):
        raise unittest.SkipTest("could not install slurm-wlm munge:\n" + r.stderr[-2000:])


def make_root(add_cleanup):
    """Copies the fixtures into a fresh root whose grader/gradelib, grader/grade.py and
    scripts/ link to the repository's; returns its path."""
    tmp = tempfile.mkdtemp(prefix="commlab-cluster-")
    add_cleanup(shutil.rmtree, tmp, True)
    root = os.path.join(tmp, "repo")
    shutil.copytree(FIXTURES, root)
    os.symlink(os.path.join(REPO, "grader", "gradelib"), os.path.join(root, "grader", "gradelib"))
    os.symlink(os.path.join(REPO, "grader", "grade.py"), os.path.join(root, "grader", "grade.py"))
    os.symlink(os.path.join(REPO, "scripts"), os.path.join(root, "scripts"))
    return root


def lab01_binary():
    """Builds lab01's reference in the repository and returns the binary's path."""
    r = subprocess.run(["make", "-s", "solution-lab01"], cwd=REPO, capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError("make solution-lab01 failed:\n" + r.stdout + r.stderr)
    return os.path.join(REPO, "build", "solutions", "lab01", "lab01")


class Cluster:
    """A private Slurm started with scripts/slurm/slurm.sh (stopped by stop())."""

    def __init__(self, nodes=1, gpus=0):
        self.dir = tempfile.mkdtemp(prefix="commlab-slurm-")
        os.rmdir(self.dir)
        r = subprocess.run([SLURM_SH, "start", "--dir", self.dir, "--nodes", str(nodes),
                            "--gpus", str(gpus)], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            self.stop()
            raise AssertionError("slurm.sh start failed:\n" + r.stdout + r.stderr)

    def run(self, argv, timeout=120, env=None, cwd=None):
        """Runs argv as a client of this cluster; returns the CompletedProcess."""
        full = dict(os.environ)
        full.pop("COMMLAB_GRADE_CWD", None)
        full.update(env or {})
        return subprocess.run([SLURM_SH, "exec", "--dir", self.dir, "--", "timeout", "-k", "5",
                               str(timeout)] + list(argv), capture_output=True, text=True,
                              env=full, cwd=cwd, timeout=timeout + 30)

    def stop(self):
        subprocess.run([SLURM_SH, "stop", "--dir", self.dir], capture_output=True,
                       timeout=120)


def write_conf(root, **settings):
    """Writes <root>/grader/cluster.conf with fast polling plus settings; returns its path."""
    values = {"poll_s": 0.5, "jobs_per_student": 3, "time_margin_s": 60, "array_throttle": 2}
    values.update(settings)
    path = os.path.join(root, "grader", "cluster.conf")
    with open(path, "w") as f:
        f.write("[slurm]\n" + "".join(f"{k} = {v}\n" for k, v in values.items()))
    return path


def grade_argv(root, *args):
    return [PYTHON, os.path.join(root, "grader", "grade.py"), "--root", root, "--no-install"] \
        + list(args)


def load(path):
    with open(path) as f:
        return json.load(f)


def tests_by_id(data):
    return {t["id"]: t for t in data["tests"]}


def live_namespaces(prefix="clnet"):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.startswith(prefix)]
