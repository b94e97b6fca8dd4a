"""Detects which execution backends (cpu, sim, gpu, nic, net, cluster) this machine has."""

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

OVERRIDE_ENV = "COMMLAB_GRADE_BACKENDS"


@dataclass
class Backend:
    """One backend: whether it is usable, why not, and the count of devices it found."""

    name: str
    available: bool
    reason: str = ""          # why it is unavailable, or what limits it
    count: int = 0            # GPUs, NICs or cluster nodes found


def _probe(argv, timeout=10):
    """Returns (rc, output) of a short command; rc None when it cannot be run."""
    try:
        r = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace")


def _first_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[0] if lines else "no output"


def detect_cpu():
    missing = [c for c in ("mpirun", "mpicc") if shutil.which(c) is None]
    if missing:
        return Backend("cpu", False, f"{' and '.join(missing)} not found on PATH")
    return Backend("cpu", True)


def detect_sim():
    return Backend("sim", True)


# Asks the CUDA runtime, in a child process, why there is no GPU (e.g. a CUDA toolkit
# without a driver gives cudaErrorInsufficientDriver). Prints "<count> <error name>".
_CUDART_PROBE = r"""
import ctypes, ctypes.util, glob, sys
names = [ctypes.util.find_library("cudart")] + glob.glob("/usr/local/cuda*/lib64/libcudart.so*")
for name in filter(None, names):
    try:
        lib = ctypes.CDLL(name)
        break
    except OSError:
        pass
else:
    sys.exit(3)
n = ctypes.c_int(0)
err = lib.cudaGetDeviceCount(ctypes.byref(n))
lib.cudaGetErrorName.restype = ctypes.c_char_p
print(n.value if err == 0 else 0, lib.cudaGetErrorName(err).decode())
"""


def _cuda_runtime_count():
    """Returns (count, error name) from cudaGetDeviceCount, or None without libcudart."""
    rc, out = _probe([sys.executable, "-c", _CUDART_PROBE], timeout=20)
    words = out.split()
    if rc != 0 or len(words) != 2 or not words[0].isdigit():
        return None
    return int(words[0]), words[1]


def detect_gpu():
    if shutil.which("nvidia-smi") is None:
        cuda = _cuda_runtime_count()
        if cuda is None:
            return Backend("gpu", False, "nvidia-smi not found", 0)
        count, err = cuda
        if count == 0:
            return Backend("gpu", False, err, 0)
        return Backend("gpu", True, "", count)
    rc, out = _probe(["nvidia-smi", "-L"])
    gpus = [l for l in out.splitlines() if l.startswith("GPU ")]
    if rc != 0 or not gpus:
        return Backend("gpu", False, f"nvidia-smi -L: {_first_line(out)}", 0)
    count = len(gpus)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:             # Slurm and users restrict GPUs this way
        count = min(count, len([d for d in visible.split(",") if d.strip()]))
        if count == 0:
            return Backend("gpu", False, "CUDA_VISIBLE_DEVICES hides every GPU", 0)
    return Backend("gpu", True, "", count)


def detect_nic(sysdir="/sys/class/infiniband"):
    try:
        devs = sorted(os.listdir(sysdir))
    except OSError:
        return Backend("nic", False, f"no {sysdir} (no RDMA devices)", 0)
    if not devs:
        return Backend("nic", False, f"{sysdir} is empty", 0)
    return Backend("nic", True, "", len(devs))


def detect_net():
    if os.geteuid() != 0:
        return Backend("net", False, "network namespaces need root")
    if shutil.which("ip") is None:
        return Backend("net", False, "ip (iproute2) not found")
    rc, out = _probe(["ip", "netns", "list"])
    if rc != 0:
        return Backend("net", False, f"ip netns: {_first_line(out)}")
    return Backend("net", True)


def detect_cluster():
    if shutil.which("sinfo") is None:
        return Backend("cluster", False, "sinfo not found (no Slurm)", 0)
    rc, out = _probe(["sinfo", "-h", "-o", "%D"])
    if rc != 0:
        return Backend("cluster", False, f"sinfo: {_first_line(out)}", 0)
    nodes = sum(int(w) for w in out.split() if w.isdigit())
    return Backend("cluster", True, "", nodes)


DETECTORS = {"cpu": detect_cpu, "sim": detect_sim, "gpu": detect_gpu, "nic": detect_nic,
             "net": detect_net, "cluster": detect_cluster}


def parse_override(text):
    """Parses e.g. 'cpu,sim,gpu=2' into {name: Backend}: the listed backends are available
    (with the given device count), every other one is not. Raises ValueError on bad input."""
    out = {name: Backend(name, False, f"disabled by {OVERRIDE_ENV}") for name in DETECTORS}
    for word in filter(None, (w.strip() for w in text.split(","))):
        name, _, num = word.partition("=")
        if name not in DETECTORS:
            raise ValueError(f"unknown backend {name!r} in {OVERRIDE_ENV}")
        count = int(num) if num else (1 if name in ("gpu", "nic", "cluster") else 0)
        if name in ("gpu", "nic", "cluster") and count == 0:
            out[name] = Backend(name, False, f"set to 0 by {OVERRIDE_ENV}", 0)
        else:
            out[name] = Backend(name, True, "", count)
    return out


class Detector:
    """Detects backends lazily (only those some check needs) and caches the answers.

    overrides: {name: Backend} replacing detection (tests and instructors use this); the
    environment variable COMMLAB_GRADE_BACKENDS (e.g. 'cpu,sim,gpu=2') is read when None.
    """

    def __init__(self, overrides=None):
        if overrides is None and os.environ.get(OVERRIDE_ENV):
            overrides = parse_override(os.environ[OVERRIDE_ENV])
        self.cache = dict(overrides or {})

    def get(self, name):
        """Returns the Backend for name."""
        if name not in self.cache:
            self.cache[name] = DETECTORS[name]()
        return self.cache[name]

    def resources(self):
        """Returns device counts found so far: gpus, nics, nodes (0 if not detected yet)
        and cpus."""
        def count(name):
            b = self.cache.get(name)
            return b.count if b and b.available else 0
        return {"gpus": count("gpu"), "nics": count("nic"), "nodes": count("cluster"),
                "cpus": os.cpu_count() or 1}


def numa_node_count():
    """Returns the number of NUMA nodes Linux shows (1 where it shows none)."""
    base = "/sys/devices/system/node"
    if not os.path.isdir(base):
        return 1
    return max(1, len([d for d in os.listdir(base) if d.startswith("node") and d[4:].isdigit()]))


def unmet_need(needs, detector):
    """Returns why `needs` cannot be met here (e.g. 'needs 2 GPUs (found 0: nvidia-smi not
    found)'), or None when every need is met."""
    words = {"gpus": ("GPU", "GPUs", "gpu"), "nics": ("RDMA NIC", "RDMA NICs", "nic"),
             "nodes": ("cluster node", "cluster nodes", "cluster")}
    for key, want in needs.items():
        if key in words:
            one, many, backend = words[key]
            b = detector.get(backend)
            have = b.count if b.available else 0
            if have < want:
                why = f": {b.reason}" if b.reason else ""
                return f"needs {want} {one if want == 1 else many} (found {have}{why})"
        elif key == "cpus":
            have = os.cpu_count() or 1
            if have < want:
                return f"needs {want} CPU cores (found {have})"
        elif key == "numa_nodes":
            have = numa_node_count()
            if have < want:
                return f"needs {want} NUMA nodes (found {have})"
        elif key == "commands":
            missing = [c for c in want if shutil.which(c) is None]
            if missing:
                return f"needs command(s) not found on PATH: {', '.join(missing)}"
        # "ranks" is always met: Open MPI oversubscribes.
    return None
