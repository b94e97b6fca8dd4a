"""Checks (and as root installs) the Debian packages the course needs."""

import os
import shutil
import subprocess
import sys

PACKAGES = ["openmpi-bin", "libopenmpi-dev", "libcmocka-dev", "libhwloc-dev", "hwloc",
            "gnuplot-nox", "make", "gcc", "pkg-config", "iproute2",
            "libseccomp-dev",              # the student's program's system-call filter
            "libibverbs-dev", "perftest"]  # lab13: rdma-core's verbs, ib_write_bw

# What the project's own tests need on top (`make test`: a private Slurm for the
# cluster tests, clang's libFuzzer and sanitizer runtimes for the fuzz targets).
TEST_PACKAGES = ["slurm-wlm", "munge", "clang", "libclang-rt-14-dev", "clang-format"]

# Where dpkg is absent: commands that stand for the packages (required ones first).
REQUIRED_COMMANDS = ["make", "gcc", "mpicc", "mpirun"]
OPTIONAL_COMMANDS = ["pkg-config", "lstopo-no-graphics", "gnuplot"]


class DepsError(Exception):
    """Dependencies are missing and cannot be installed here; the message says what to do."""


def missing_packages(packages=PACKAGES, run=subprocess.run):
    """Returns the packages dpkg does not list as installed."""
    r = run(["dpkg-query", "-W", "-f=${Package} ${Status}\n"] + list(packages),
            capture_output=True, text=True)
    installed = set()
    for line in r.stdout.splitlines():
        words = line.split()
        if len(words) >= 4 and words[-1] == "installed" and words[-3] == "install":
            installed.add(words[0].split(":")[0])
    return [p for p in packages if p not in installed]


def install_command(missing):
    """Returns the shell line that installs the missing packages."""
    return ("apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "
            + " ".join(missing))


def ensure(out=sys.stderr, is_root=None, which=shutil.which, run=subprocess.run,
           packages=PACKAGES):
    """Makes sure the course's dependencies are present.

    On Debian: installs missing packages with apt-get when root (showing its progress),
    else raises DepsError with the one `sudo apt-get install -y ...` line. Without dpkg:
    raises DepsError naming missing required commands and warns about optional ones.
    """
    if is_root is None:
        is_root = os.geteuid() == 0
    if which("dpkg-query") is None:
        missing = [c for c in REQUIRED_COMMANDS if which(c) is None]
        optional = [c for c in OPTIONAL_COMMANDS if which(c) is None]
        if optional:
            out.write(f"note: optional commands not found: {', '.join(optional)}\n")
        if missing:
            raise DepsError(f"required commands not found: {', '.join(missing)}; install "
                            "Open MPI (mpicc, mpirun), make and gcc with your package manager")
        return []
    missing = missing_packages(packages, run=run)
    if not missing:
        return []
    if not is_root:
        raise DepsError("missing packages: " + " ".join(missing) + "\ninstall them with:\n"
                        "  sudo apt-get install -y " + " ".join(missing))
    line = install_command(missing)
    out.write(f"installing missing packages: {' '.join(missing)}\n$ {line}\n")
    out.flush()
    r = run(["sh", "-c", line])
    if r.returncode != 0:
        raise DepsError(f"package installation failed (exit {r.returncode}): {line}")
    return missing
