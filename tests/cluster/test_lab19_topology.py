"""lab19's topology.conf in a real Slurm: a private slurmctld (topology/tree) loads the file the
lab's program writes for a fabric, and `scontrol show topology` reads back the same tree.

The controller needs no slurmd: the fabric's nodes are defined (at 127.0.0.1, never contacted)
only so that topology.conf may name them. munged and slurmctld run as root with their state in
a temporary folder and a port of their own (16917), and are stopped afterwards."""

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from tests.cluster import helpers as h

sys.path.insert(0, os.path.join(h.REPO, "grader", "labs"))
import _lab19_model as model  # noqa: E402

PORT = 16917
SLURM_CONF = """ClusterName=lab19
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={port}
SlurmdPort={port1}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge/munge.socket
SlurmUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/run/slurmctld.pid
SlurmctldLogFile={dir}/log/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
TopologyPlugin=topology/tree
NodeName={nodes} NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=lab Nodes=ALL Default=YES State=UP
"""


class Controller:
    """munged and a slurmctld with topology/tree over the nodes of one fabric."""

    def __init__(self, node_names, topology_text):
        self.dir = tempfile.mkdtemp(prefix="commlab-lab19-slurm-")
        for d in ("munge", "state", "log", "run", "spool"):
            os.makedirs(os.path.join(self.dir, d))
        os.chmod(self.dir, 0o755)
        os.chmod(os.path.join(self.dir, "munge"), 0o755)
        key = os.path.join(self.dir, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.conf = os.path.join(self.dir, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(SLURM_CONF.format(host=os.uname().nodename.split(".")[0], port=PORT,
                                      port1=PORT + 1, dir=self.dir,
                                      nodes=model.compress(node_names)))
        with open(os.path.join(self.dir, "topology.conf"), "w") as f:
            f.write(topology_text)
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        d = self.dir
        subprocess.run(["munged", f"--socket={d}/munge/munge.socket", f"--key-file={key}",
                        f"--pid-file={d}/run/munged.pid", f"--log-file={d}/log/munged.log",
                        f"--seed-file={d}/munge/munged.seed"], check=True, timeout=30)
        r = subprocess.run(["slurmctld", "-f", self.conf], env=self.env, capture_output=True,
                           text=True, timeout=30)
        if r.returncode != 0:
            self.stop()
            raise AssertionError("slurmctld did not start:\n" + r.stderr + self.log())
        for _ in range(50):
            if self.scontrol("ping").returncode == 0:
                return
            time.sleep(0.2)
        log = self.log()
        self.stop()
        raise AssertionError("slurmctld does not answer:\n" + log)

    def scontrol(self, *args):
        return subprocess.run(["scontrol", *args], env=self.env, capture_output=True, text=True,
                              timeout=30)

    def log(self):
        try:
            with open(os.path.join(self.dir, "log", "slurmctld.log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        for name in ("slurmctld", "munged"):
            try:
                with open(os.path.join(self.dir, "run", name + ".pid")) as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                continue
            try:
                os.kill(pid, 15)
                for _ in range(50):
                    os.kill(pid, 0)
                    time.sleep(0.1)
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def read_back(text):
    """{switch: {"level": n, "nodes": [...], "switches": [...]}} from scontrol show topology."""
    out = {}
    for line in text.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if "SwitchName" not in fields:
            continue
        out[fields["SwitchName"]] = {
            "level": int(fields.get("Level", -1)),
            "nodes": model.expand(fields["Nodes"]) if "Nodes" in fields else [],
            "switches": model.expand(fields["Switches"]) if "Switches" in fields else []}
    return out


def fabric_of(path):
    switches, nodes = [], []
    with open(path) as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if w and w[0] == "switch":
                switches.append({"name": w[1], "level": int(w[3]),
                                 "parent": None if w[5] == "-" else w[5]})
            elif w and w[0] == "node":
                nodes.append({"name": w[1], "leaf": w[2]})
    return {"switches": switches, "nodes": nodes}


class TopologyInSlurm(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        h.require_root(cls)
        h.ensure_slurm()
        # The reference's program by default; COMMLAB_LAB19_STUDENT=1 loads the student's
        # own topology.conf (labs/lab19/lab19.c) instead.
        student = bool(os.environ.get("COMMLAB_LAB19_STUDENT"))
        target = "lab19" if student else "solution-lab19"
        r = subprocess.run(["make", "-s", target], cwd=h.REPO, capture_output=True,
                           text=True, timeout=600)
        if r.returncode != 0:
            raise AssertionError(f"make {target} failed:\n" + r.stdout + r.stderr)
        cls.program = os.path.join(h.REPO, "build", "labs" if student else "solutions",
                                   "lab19", "lab19")
        cls.tmp = tempfile.mkdtemp(prefix="commlab-lab19-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)

    def topology_of(self, fabric_path):
        out = os.path.join(self.tmp, "t.json")
        r = subprocess.run([self.program, "topology", f"fabric={fabric_path}", "--json", out],
                           cwd=h.REPO, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out) as f:
            row = json.load(f)["rows"][0]
        self.assertEqual(row["status"], "success", row.get("error"))
        return row["topology"]

    def check_fabric(self, fabric_path):
        fabric = fabric_of(fabric_path)
        ctl = Controller([n["name"] for n in fabric["nodes"]], self.topology_of(fabric_path))
        try:
            self.compare(ctl, fabric)
        finally:
            ctl.stop()

    def compare(self, ctl, fabric):
        r = ctl.scontrol("show", "topology")
        self.assertEqual(r.returncode, 0, r.stderr + ctl.log())
        got = read_back(r.stdout)
        self.assertEqual(sorted(got), sorted(s["name"] for s in fabric["switches"]), r.stdout)
        for s in fabric["switches"]:
            g = got[s["name"]]
            self.assertEqual(g["level"], s["level"] - 1, s["name"])   # Slurm counts from 0
            below = [n["name"] for n in fabric["nodes"] if n["leaf"] == s["name"]]
            kids = [c["name"] for c in fabric["switches"] if c["parent"] == s["name"]]
            if s["level"] == 1:
                self.assertEqual(sorted(g["nodes"]), sorted(below), s["name"])
            else:
                self.assertEqual(sorted(g["switches"]), sorted(kids), s["name"])
        complaints = [ln for ln in ctl.log().splitlines()
                      if "error" in ln.lower() and ("switch" in ln.lower() or "topolog" in ln.lower())]
        self.assertEqual(complaints, [], ctl.log())

    def test_recorded_fabrics(self):
        for name in ("leafspine-128", "pods-192", "su-100"):
            with self.subTest(fabric=name):
                self.check_fabric(os.path.join(h.REPO, "datasets", "lab19", "fabrics",
                                               name + ".fabric"))

    def test_a_fresh_fabric(self):
        f = model.random_fabric(random.Random(), "slurm")
        path = os.path.join(self.tmp, "fresh.fabric")
        model.write_fabric(f, path)
        self.check_fabric(path)


if __name__ == "__main__":
    unittest.main()
