"""./grade LAB --cluster and --batch: a lab's checks as Slurm jobs, infrastructure failures
told apart from the student's (INFRA-ERROR, retried once, never scored), batch grading of a
folder of submissions as a throttled job array with a CSV.

Each job runs `python3 -m gradelib.cluster job ...` (job_main) on its first node: it copies
the repository to a private temporary folder (concurrent jobs never share build/grade), runs
./grade there and writes results JSON and failed checks' logs back to build/cluster/<run>/.
The repository must be on a file system the compute nodes share (as home folders are).
"""

import argparse
import configparser
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from . import report, slurm
from .progress import fmt_points
from .select import run_order
from .verdicts import FAILED_VERDICTS, SKIP, Outcome

INFRA_ERROR = "INFRA-ERROR"
CONF_ENV = "COMMLAB_CLUSTER_CONF"
EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3

# Output that only the cluster produces, never a student's bug. Found in a failed check's
# output, it makes the check INFRA-ERROR. NCCL: ncclGetErrorString() of ncclSystemError and
# ncclRemoteError, and net_ib's completion errors; Slurm: slurmstepd/srun cancellation lines;
# Open MPI: daemon launch failures.
INFRA_PATTERNS = [
    (re.compile(r"DUE TO NODE FAILURE|srun: error: Node failure|Node failure on"),
     "node failure (Slurm)"),
    (re.compile(r"DUE TO PREEMPTION"), "job preempted (Slurm)"),
    (re.compile(r"\*\*\* (JOB|STEP) \S+ ON \S+ CANCELLED AT"), "job cancelled (Slurm)"),
    (re.compile(r"remote process exited or there was a network error"),
     "NCCL remote/network error"),
    (re.compile(r"unhandled system error"), "NCCL system error"),
    (re.compile(r"NET/IB\s*:.*(completion|Got completion).*(error|status)", re.I),
     "NCCL InfiniBand completion error"),
    (re.compile(r"IBV_WC_RETRY_EXC_ERR|Transport retry count exceeded|ibv_poll_cq failed"),
     "InfiniBand transport error"),
    (re.compile(r"ORTE was unable to reliably start one or more daemons|"
                r"An ORTE daemon has unexpectedly failed"), "MPI daemons could not start"),
]


class ClusterOutcome(Outcome):
    """An Outcome rebuilt from a job's results; INFRA-ERROR counts like a skip."""

    @property
    def skipped(self):
        return self.verdict in (SKIP, INFRA_ERROR)


# ---- site configuration -----------------------------------------------------------------

@dataclass
class Config:
    """The site's settings (grader/cluster.conf, see grader/cluster.conf.example)."""

    partition: str = ""
    account: str = ""
    reservation: str = ""
    qos: str = ""
    exclusive: bool = False
    nice: str = ""
    extra_args: list = field(default_factory=list)
    jobs_per_student: int = 2
    array_throttle: int = 4
    time_scale: float = 1.0
    time_margin_s: int = 120
    poll_s: float = 10.0
    path: str = None

    def sbatch_site_args(self):
        args = []
        for opt, val in (("--partition", self.partition), ("--account", self.account),
                         ("--reservation", self.reservation), ("--qos", self.qos),
                         ("--nice", self.nice)):
            if val:
                args.append(f"{opt}={val}")
        if self.exclusive:
            args.append("--exclusive")
        return args + list(self.extra_args)


def load_config(root):
    """Returns the Config from $COMMLAB_CLUSTER_CONF or <root>/grader/cluster.conf; every
    setting missing there (or no file at all) keeps Slurm's default. Raises ValueError."""
    path = os.environ.get(CONF_ENV) or os.path.join(root, "grader", "cluster.conf")
    conf = Config()
    if not os.path.isfile(path):
        if os.environ.get(CONF_ENV):
            raise ValueError(f"{CONF_ENV}={path}: no such file")
        return conf
    cp = configparser.ConfigParser(inline_comment_prefixes=("#",))
    try:
        cp.read(path)
        s = cp["slurm"] if cp.has_section("slurm") else {}
        for name in ("partition", "account", "reservation", "qos", "nice"):
            setattr(conf, name, s.get(name, "").strip())
        conf.exclusive = s.get("exclusive", "no").strip().lower() in ("1", "yes", "true", "on")
        conf.extra_args = s.get("extra_args", "").split()
        conf.jobs_per_student = max(1, int(s.get("jobs_per_student", conf.jobs_per_student)))
        conf.array_throttle = max(1, int(s.get("array_throttle", conf.array_throttle)))
        conf.time_scale = float(s.get("time_scale", conf.time_scale))
        conf.time_margin_s = int(s.get("time_margin_s", conf.time_margin_s))
        conf.poll_s = max(0.2, float(s.get("poll_s", conf.poll_s)))
    except (configparser.Error, ValueError) as e:
        raise ValueError(f"{path}: {e}") from None
    if conf.time_scale <= 0:
        raise ValueError(f"{path}: time_scale must be > 0")
    conf.path = path
    return conf


# ---- what a job needs --------------------------------------------------------------------

@dataclass
class Group:
    """Checks graded by one job: the selected checks of one backend."""

    name: str
    ids: list
    nodes: int = 1
    gpus_per_node: int = 0
    tasks_per_node: int = 1
    time_s: int = 60


def needs_of(lab, ids, conf):
    """Returns a Group sizing the job for ids (and the checks they depend on): nodes, GPUs
    per node, tasks per node (MPI slots: ranks need, default 2) and the time limit (the sum
    of the checks' timeouts x time_scale + time_margin_s)."""
    checks = run_order(lab, set(ids))
    nodes = max([c.needs.get("nodes", 1) for c in checks] + [1])
    gpus = max([c.needs.get("gpus", 0) for c in checks] + [0])
    ranks = max([c.needs.get("ranks", 2) for c in checks] + [2])
    total = sum(c.timeout for c in checks)
    return Group("", list(ids), nodes, math.ceil(gpus / nodes), max(1, math.ceil(ranks / nodes)),
                 int(total * conf.time_scale + conf.time_margin_s))


def plan_groups(lab, ids, conf):
    """Returns one Group per backend among the selected ids, in the spec's order."""
    by_backend = {}
    for chk in lab.checks:
        if chk.id in ids:
            by_backend.setdefault(chk.backend, []).append(chk.id)
    groups = []
    for backend, gids in by_backend.items():
        g = needs_of(lab, gids, conf)
        g.name = backend
        groups.append(g)
    return groups


def slurm_resources(g):
    """Returns the sbatch/srun options for a Group's resources."""
    args = [f"--nodes={g.nodes}", f"--ntasks-per-node={g.tasks_per_node}",
            f"--time={max(1, math.ceil(g.time_s / 60))}"]
    if g.gpus_per_node:
        args.append(f"--gpus-per-node={g.gpus_per_node}")
    return args


def exact(ids):
    """Returns filters matching exactly these ids (a prefix filter would match more)."""
    return [f"[{i[0]}]{i[1:]}" for i in ids]


# ---- inside the job ---------------------------------------------------------------------

_SKIP_COPY = {".git", "build/grade", "build/cluster", "build/fuzz", "build-san"}


def _copy_tree(root, dest):
    def ignore(d, names):
        rel = os.path.relpath(d, root)
        return {n for n in names
                if os.path.normpath(os.path.join(rel, n)) in _SKIP_COPY or n == "__pycache__"}
    shutil.copytree(root, dest, symlinks=True, ignore=ignore)


def job_main(argv):
    """Entry point of a job (python3 -m gradelib.cluster job ...): grades a private copy of
    the repository and writes the results JSON; returns ./grade's exit status."""
    p = argparse.ArgumentParser(prog="gradelib.cluster job")
    p.add_argument("--root", required=True)
    p.add_argument("--lab", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--logs", required=True)
    p.add_argument("--ids", default="")
    p.add_argument("--solution", action="store_true")
    p.add_argument("--source")
    p.add_argument("--backend")
    a = p.parse_args(argv)
    host = os.uname().nodename
    sys.stdout.write(f"commlab job {os.environ.get('SLURM_JOB_ID', '-')} on {host} "
                     f"(nodes {os.environ.get('SLURM_JOB_NODELIST', host)})\n")
    sys.stdout.flush()
    work = tempfile.mkdtemp(prefix="commlab-job-")
    try:
        repo = os.path.join(work, "repo")
        _copy_tree(a.root, repo)
        tmp_json = os.path.join(work, "results.json")
        cmd = [sys.executable, "-B", os.path.join(repo, "grader", "grade.py"), "--root", repo,
               "--no-install", a.lab, "--json", tmp_json]
        cmd += exact([i for i in a.ids.split(",") if i])
        if a.solution:
            cmd.append("--solution")
        if a.source:
            cmd += ["--source", a.source]
        if a.backend:
            cmd += ["--backend", a.backend]
        env = dict(os.environ)
        env.pop("COMMLAB_GRADE_CWD", None)
        rc = subprocess.call(cmd, env=env, cwd=repo, stdin=subprocess.DEVNULL)
        os.makedirs(a.logs, exist_ok=True)
        logdir = os.path.join(repo, "build", "grade", a.lab)
        for name in os.listdir(logdir) if os.path.isdir(logdir) else []:
            if name.endswith(".log"):
                shutil.copy(os.path.join(logdir, name), os.path.join(a.logs, name))
        if os.path.isfile(tmp_json):
            with open(tmp_json) as f:
                data = json.load(f)
            data["job"] = {"id": os.environ.get("SLURM_JOB_ID"), "host": host,
                           "nodes": os.environ.get("SLURM_JOB_NODELIST"), "exit": rc}
            report.write_json(a.json + ".part", data)
            os.replace(a.json + ".part", a.json)
        return rc
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- submitting and waiting -------------------------------------------------------------

@dataclass
class Attempt:
    """One job (or srun step) grading a Group, and how it ended."""

    group: Group
    number: int
    json: str
    out: str
    job_id: str = None
    proc: object = None           # srun step inside an allocation
    state: str = "PENDING"
    reason: str = ""
    nodes: str = ""
    done: bool = False


def _job_script(path, root, lab, ids, json_path, logs, mode_args, python):
    """Writes the job script: task 0 grades; other tasks of an srun step just end."""
    argv = [python, "-B", "-m", "gradelib.cluster", "job", "--root", root, "--lab", lab,
            "--json", json_path, "--logs", logs, "--ids", ",".join(ids)] + mode_args
    with open(path, "w") as f:
        f.write("#!/bin/bash\n# commlab: one grading job (made by ./grade --cluster)\n"
                '[ "${SLURM_PROCID:-0}" = 0 ] || exit 0\n'
                "export SLURM_OVERLAP=1   # mpirun's own srun may share this step's nodes\n"
                f"cd {_q(os.path.join(root, 'grader'))} || exit 3\n"
                "exec " + " ".join(_q(a) for a in argv) + "\n")
    os.chmod(path, 0o755)


def _q(s):
    import shlex
    return shlex.quote(str(s))


class Runner:
    """Runs Attempts as Slurm jobs (sbatch, or srun steps inside an allocation), at most
    `limit` at once, printing the queue state while waiting."""

    def __init__(self, conf, rundir, lab, root, mode_args, stream, in_alloc):
        self.conf, self.rundir, self.lab, self.root = conf, rundir, lab, root
        self.mode_args, self.stream, self.in_alloc = mode_args, stream, in_alloc
        self.watch = slurm.QueueWatch(stream)

    def submit(self, att):
        script = os.path.join(self.rundir, f"{att.group.name}-{att.number}.sh")
        _job_script(script, self.root, self.lab.name, att.group.ids, att.json,
                    os.path.join(self.rundir, "logs", att.group.name), self.mode_args,
                    sys.executable)
        name = f"commlab-{self.lab.name}-{att.group.name}"
        res = slurm_resources(att.group)
        if self.in_alloc:
            argv = ["srun", f"--job-name={name}", f"--ntasks={att.group.nodes}",
                    "--ntasks-per-node=1"] + [r for r in res if "ntasks" not in r] \
                + ["--kill-on-bad-exit=0", script]
            with open(att.out, "wb") as out:
                att.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
            att.state = "RUNNING"
            self.stream.write(f"cluster: srun step {att.group.name} in job "
                              f"{os.environ.get('SLURM_JOB_ID')}: {' '.join(res)}\n")
        else:
            opts = [f"--job-name={name}", f"--output={att.out}", f"--chdir={self.rundir}"] \
                + res + self.conf.sbatch_site_args()
            att.job_id = slurm.sbatch(opts, script)
            self.stream.write(f"cluster: submitted {att.group.name} checks as job {att.job_id} "
                              f"({' '.join(res)})\n")
        self.stream.flush()

    def run_all(self, attempts):
        """Runs the attempts, at most conf.jobs_per_student at once; returns when all ended.
        Ctrl-C cancels the jobs still queued or running."""
        todo, live = list(attempts), []
        try:
            while todo or live:
                while todo and len(live) < self.conf.jobs_per_student:
                    att = todo.pop(0)
                    try:
                        self.submit(att)
                    except slurm.SlurmError as e:
                        att.state, att.reason, att.done = "SUBMIT_FAILED", str(e), True
                        continue
                    live.append(att)
                self._poll(live)
                live = [a for a in live if not a.done]
                if live:
                    time.sleep(self.conf.poll_s)
        except BaseException:
            slurm.cancel([a.job_id for a in live if a.job_id])
            for a in live:
                if a.proc and a.proc.poll() is None:
                    a.proc.terminate()
            raise

    def _poll(self, live):
        jobs = [a for a in live if a.job_id]
        names = {a.job_id: a.group.name for a in jobs}
        rows = slurm.queue(list(names)) if jobs else {}
        if self.in_alloc and any(a.proc for a in live):
            rows.update(_steps())
        self.watch.show(rows, names)
        for a in jobs:
            row = rows.get(a.job_id)
            if row and row[0] == "PENDING" and row[1] in slurm.NEVER_REASONS:
                slurm.cancel([a.job_id])
                a.state, a.reason, a.done = "NEVER_STARTS", row[1], True
        for a in live:
            if a.proc is not None:
                rc = a.proc.poll()
                if rc is not None:
                    a.done, a.state = True, "COMPLETED" if rc == 0 else f"STEP_EXIT_{rc}"
                    if rc < 0:
                        a.state = "CANCELLED"
            elif a.job_id not in rows:
                fin = slurm.final_states(a.job_id).get(a.job_id, {})
                a.state = fin.get("state", "UNKNOWN")
                a.reason, a.nodes, a.done = fin.get("reason", ""), fin.get("nodes", ""), True


def _steps():
    jid = os.environ.get("SLURM_JOB_ID")
    out = slurm.call(["squeue", "-h", "-s", "-j", jid, "-o", "%i|%j|%M|%N"], check=False)
    rows = {}
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 4 and "commlab" in parts[1]:
            rows[parts[0]] = ("RUNNING", "", parts[2], parts[3])
    return rows


# ---- classifying what came back ---------------------------------------------------------

def infra_in_text(text):
    """Returns the reason when text shows an infrastructure failure, else None."""
    for rx, why in INFRA_PATTERNS:
        m = rx.search(text or "")
        if m:
            return f"{why}: {m.group(0)[:120]}"
    return None


def _read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def classify(att):
    """Returns (job_infra_reason or None, results dict or None) for a finished Attempt; each
    failed test whose output shows an infrastructure failure gets "infra": reason."""
    data = None
    if os.path.isfile(att.json):
        try:
            with open(att.json) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = None
    where = f"job {att.job_id}" if att.job_id else "srun step"
    if att.nodes:
        where += f" on {att.nodes}"
    reason = None
    if att.state in slurm.INFRA_STATES:
        reason = f"{att.state}: {slurm.INFRA_STATES[att.state]} ({where})"
    elif att.state in ("SUBMIT_FAILED", "NEVER_STARTS"):
        reason = f"the job cannot run here: {att.reason}"
    else:
        joblevel = infra_in_text(_read(att.out))
        if joblevel and data is None:
            reason = f"{joblevel} ({where})"
    if reason is None and data is None:
        reason = (f"{where} ended {att.state} without results; see "
                  f"{os.path.basename(att.out)}")
    if data is not None:
        for t in data.get("tests", []):
            if t.get("verdict") in FAILED_VERDICTS:
                why = infra_in_text(t.get("output", ""))
                if why:
                    t["infra"] = why
    return reason, data


def needs_retry(reason, data):
    return reason is not None or any("infra" in t for t in (data or {}).get("tests", []))


def to_outcomes(lab, ids, reason, data, retried, log_dir=None):
    """Returns ClusterOutcomes for ids (in the spec's order) from a job's results; checks
    the job never reported, and failures caused by the cluster, become INFRA-ERROR."""
    tests = {t["id"]: t for t in (data or {}).get("tests", [])}
    note = " (after one retry)" if retried else ""
    outs = []
    for chk in lab.checks:
        if chk.id not in ids:
            continue
        t = tests.get(chk.id)
        o = ClusterOutcome(check=chk)
        if t is None or "infra" in t or reason:
            why = reason or (t or {}).get("infra") or "the job did not report this check"
            o.verdict, o.message = INFRA_ERROR, f"infrastructure error, not counted{note}: {why}"
            if t is not None:
                t.update(status="skipped", verdict=INFRA_ERROR, score=0, max_score=0,
                         output=o.message + "\n" + t.get("output", ""))
        else:
            o.verdict, o.score = t["verdict"], t.get("score", 0)
            o.message, o.metrics = t.get("output", ""), t.get("metrics", {})
            o.elapsed = t.get("elapsed", 0.0)
            log = os.path.join(log_dir or "", chk.id + ".log")
            if log_dir and o.failed and os.path.isfile(log):
                o.log_path = log
        outs.append(o)
    return outs


# ---- ./grade LAB --cluster -----------------------------------------------------------

def _rundir(root, what):
    stamp = time.strftime("%Y%m%d-%H%M%S")
    d = os.path.join(root, "build", "cluster", f"{what}-{stamp}-{os.getpid()}")
    os.makedirs(os.path.join(d, "logs"), exist_ok=True)
    return d


def _mode_args(args):
    out = []
    if args.solution:
        out.append("--solution")
    if args.source:
        out += ["--source", os.path.abspath(args.source)]
    if args.backend:
        out += ["--backend", args.backend]
    return out


def grade_cluster(root, lab, ids, args, stream=sys.stderr, out=sys.stdout):
    """Grades the selected checks as Slurm jobs and prints the report; returns the exit
    status (0 full marks, 1 below, 2 misuse or Slurm unusable, 3 infrastructure errors)."""
    try:
        conf = load_config(root)
    except ValueError as e:
        stream.write(f"grade: {e}\n")
        return EXIT_USAGE
    if shutil.which("sbatch") is None or shutil.which("squeue") is None:
        stream.write("grade: --cluster needs Slurm's sbatch and squeue on PATH\n")
        return EXIT_USAGE
    in_alloc = bool(os.environ.get("SLURM_JOB_ID"))
    rundir = _rundir(root, lab.name)
    groups = plan_groups(lab, ids, conf)
    stream.write(f"cluster: {len(groups)} job(s) for {lab.name}"
                 f"{' as steps of job ' + os.environ['SLURM_JOB_ID'] if in_alloc else ''}; "
                 f"site settings: {conf.path or 'none (Slurm defaults)'}; files in "
                 f"{os.path.relpath(rundir, root)}\n")
    outcomes = {}
    have_gpus = slurm.gres_gpus() if any(g.gpus_per_node for g in groups) else None
    have_nodes = slurm.node_count(conf.partition)
    runnable = []
    for g in groups:
        why = None
        if g.gpus_per_node and have_gpus is not None and have_gpus < g.gpus_per_node:
            why = (f"needs {g.gpus_per_node} GPU(s) per node (the cluster's nodes have "
                   f"{have_gpus} gres/gpu: sinfo -o %G)")
        elif have_nodes is not None and have_nodes < g.nodes:
            why = f"needs {g.nodes} cluster nodes (the partition has {have_nodes}: sinfo)"
        if why is None:
            runnable.append(g)
            continue
        for cid in g.ids:
            outcomes[cid] = ClusterOutcome(check=lab.get(cid), verdict=SKIP,
                                           message="skipped: " + why)
    runner = Runner(conf, rundir, lab, root, _mode_args(args), stream, in_alloc)
    attempts = [Attempt(g, 1, os.path.join(rundir, f"{g.name}-1.json"),
                        os.path.join(rundir, f"{g.name}-1.out")) for g in runnable]
    jobs = []
    try:
        runner.run_all(attempts)
        final = {}
        retry = []
        for att in attempts:
            reason, data = classify(att)
            final[att.group.name] = (att, reason, data, False)
            if needs_retry(reason, data):
                stream.write(f"cluster: {att.group.name}: infrastructure failure "
                             f"({reason or 'in the checks output'}); retrying once\n")
                retry.append(Attempt(att.group, 2, os.path.join(rundir, f"{att.group.name}-2.json"),
                                     os.path.join(rundir, f"{att.group.name}-2.out")))
        runner.run_all(retry)
        for att in retry:
            reason, data = classify(att)
            final[att.group.name] = (att, reason, data, True)
    except KeyboardInterrupt:
        stream.write("\ngrade: interrupted (jobs cancelled)\n")
        return 130
    for name, (att, reason, data, retried) in final.items():
        jobs.append({"group": name, "job": att.job_id, "state": att.state, "nodes": att.nodes,
                     "attempt": att.number, "infra": reason})
        for o in to_outcomes(lab, set(att.group.ids), reason, data, retried,
                             os.path.join(rundir, "logs", name)):
            outcomes[o.check.id] = o
    ordered = [outcomes[c.id] for c in lab.checks if c.id in outcomes]
    out.write(report.text(lab, ordered, root))
    out.write(f"Cluster jobs: " + "; ".join(
        f"{j['group']}: job {j['job'] or 'step'} {j['state']}"
        + (f" on {j['nodes']}" if j['nodes'] else "")
        + (" (retry)" if j['attempt'] > 1 else "") for j in jobs) + "\n")
    out.flush()
    infra = [o for o in ordered if o.verdict == INFRA_ERROR]
    if args.json:
        backends = sorted({o.check.backend for o in ordered if not o.skipped})
        data = report.results(lab, ordered, backends, root)
        data["infra_errors"] = len(infra)
        data["cluster_jobs"] = jobs
        report.write_json(args.json, data)
    if infra:
        return EXIT_INFRA
    return EXIT_OK if report.full_marks(ordered) else EXIT_BELOW


# ---- ./grade LAB --batch SUBMISSIONS ----------------------------------------------------

def _safe(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"


def _array_script(path, root, lab, manifest, outdir, python):
    with open(path, "w") as f:
        f.write("#!/bin/bash\n# commlab: batch grading, one array task per submission\n"
                'line=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" ' + _q(manifest) + ")\n"
                'name=${line%%\t*}; src=${line#*\t}\n'
                f"cd {_q(os.path.join(root, 'grader'))} || exit 3\n"
                f"exec {_q(python)} -B -m gradelib.cluster job --root {_q(root)} "
                f"--lab {_q(lab)} --source \"$src\" --json {_q(outdir)}/\"$name\"/results.json "
                f"--logs {_q(outdir)}/\"$name\"/logs\n")
    os.chmod(path, 0o755)


def _run_array(conf, root, lab, group, students, outdir, number, stream):
    """Submits one array over students [(name, dir)], waits, returns {name: (state, nodes,
    out file)}."""
    manifest = os.path.join(outdir, f"attempt{number}.txt")
    with open(manifest, "w") as f:
        for name, src in students:
            f.write(f"{name}\t{src}\n")
    script = os.path.join(outdir, f"attempt{number}.sh")
    _array_script(script, root, lab.name, manifest, outdir, sys.executable)
    for name, _ in students:
        os.makedirs(os.path.join(outdir, name), exist_ok=True)
        try:
            os.remove(os.path.join(outdir, name, "results.json"))
        except OSError:
            pass
    opts = [f"--job-name=commlab-batch-{lab.name}",
            f"--array=0-{len(students) - 1}%{conf.array_throttle}",
            f"--output={outdir}/attempt{number}-%a.out", f"--chdir={outdir}"] \
        + slurm_resources(group) + conf.sbatch_site_args()
    job = slurm.sbatch(opts, script)
    stream.write(f"cluster: batch attempt {number}: job array {job} with {len(students)} "
                 f"task(s), at most {conf.array_throttle} at once ({' '.join(opts[1:2])} "
                 f"{' '.join(slurm_resources(group))})\n")
    stream.flush()
    watch = slurm.QueueWatch(stream)
    try:
        while True:
            rows = slurm.queue([job])
            watch.show(rows, {job: "batch"})
            if not rows:
                break
            time.sleep(conf.poll_s)
    except KeyboardInterrupt:
        slurm.cancel([job])
        raise
    states = slurm.final_states(job)
    res = {}
    for i, (name, _) in enumerate(students):
        st = states.get(f"{job}_{i}") or (states.get(job) if len(students) == 1 else None) or {}
        res[name] = (st.get("state", "UNKNOWN"), st.get("nodes", ""),
                     os.path.join(outdir, f"attempt{number}-{i}.out"), f"{job}_{i}")
    return res


def grade_batch(root, lab, subs, outdir, stream=sys.stderr, out=sys.stdout):
    """Grades every sub-folder of subs holding <lab>.c as a throttled job array; writes
    <outdir>/<student>/results.json and <outdir>/grades.csv. Returns the exit status (0, or
    3 when some submissions keep infrastructure errors, 2 on misuse)."""
    try:
        conf = load_config(root)
    except ValueError as e:
        stream.write(f"grade: {e}\n")
        return EXIT_USAGE
    if not os.path.isdir(subs):
        stream.write(f"grade: --batch {subs}: not a directory\n")
        return EXIT_USAGE
    if shutil.which("sbatch") is None:
        stream.write("grade: --batch needs Slurm's sbatch on PATH\n")
        return EXIT_USAGE
    outdir = os.path.abspath(outdir or _rundir(root, f"batch-{lab.name}"))
    os.makedirs(outdir, exist_ok=True)
    names = sorted(os.listdir(subs))
    students = [(_safe(n), os.path.abspath(os.path.join(subs, n))) for n in names
                if os.path.isfile(os.path.join(subs, n, lab.name + ".c"))]
    missing = [n for n in names if os.path.isdir(os.path.join(subs, n))
               and not os.path.isfile(os.path.join(subs, n, lab.name + ".c"))]
    if not students:
        stream.write(f"grade: no sub-folder of {subs} holds {lab.name}.c\n")
        return EXIT_USAGE
    ids = [c.id for c in lab.checks]
    group = needs_of(lab, ids, conf)
    group.name = "batch"
    # Checks needing more than the cluster has are skipped inside the job (with the reason);
    # the array must still be able to start.
    have_nodes, have_gpus = slurm.node_count(conf.partition), slurm.gres_gpus()
    if have_nodes:
        group.nodes = min(group.nodes, have_nodes)
    if have_gpus is not None:
        group.gpus_per_node = min(group.gpus_per_node, have_gpus)
    rows = {}
    try:
        ends = _run_array(conf, root, lab, group, students, outdir, 1, stream)
        again = []
        for name, src in students:
            state, nodes, log, job = ends[name]
            att = Attempt(group, 1, os.path.join(outdir, name, "results.json"), log,
                          job_id=job, state=state, nodes=nodes, done=True)
            reason, data = classify(att)
            rows[name] = (att, reason, data, False)
            if needs_retry(reason, data):
                again.append((name, src))
        if again:
            stream.write(f"cluster: retrying {len(again)} submission(s) once after "
                         "infrastructure failures\n")
            ends = _run_array(conf, root, lab, group, again, outdir, 2, stream)
            for name, _ in again:
                state, nodes, log, job = ends[name]
                att = Attempt(group, 2, os.path.join(outdir, name, "results.json"), log,
                              job_id=job, state=state, nodes=nodes, done=True)
                reason, data = classify(att)
                rows[name] = (att, reason, data, True)
    except KeyboardInterrupt:
        stream.write("\ngrade: interrupted (jobs cancelled)\n")
        return 130
    except slurm.SlurmError as e:
        stream.write(f"grade: {e}\n")
        return EXIT_USAGE
    csv_path = os.path.join(outdir, "grades.csv")
    any_infra = False
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "score", "max_score", "passed", "failed", "skipped",
                    "infra_errors", "status", "job", "nodes"])
        for name, _ in students:
            att, reason, data, retried = rows[name]
            outs = to_outcomes(lab, set(ids), reason, data, retried,
                               os.path.join(outdir, name, "logs"))
            score, max_score, passed, failed, skipped = report.totals(outs)
            infra = sum(1 for o in outs if o.verdict == INFRA_ERROR)
            any_infra = any_infra or infra > 0
            res = report.results(lab, outs, sorted({o.check.backend for o in outs
                                                    if not o.skipped}), root)
            res.update(infra_errors=infra, student=name,
                       job={"id": att.job_id, "state": att.state, "nodes": att.nodes,
                            "attempt": att.number})
            report.write_json(os.path.join(outdir, name, "results.json"), res)
            status = "infra-error" if infra else "graded"
            w.writerow([name, fmt_points(score), fmt_points(max_score), passed, failed, skipped,
                        infra, status,
                        att.job_id, att.nodes])
        for n in missing:
            w.writerow([_safe(n), 0, "", 0, 0, 0, 0, f"no {lab.name}.c", "", ""])
    out.write(f"batch: {len(students)} submission(s) graded, {len(missing)} without "
              f"{lab.name}.c\ngrades: {csv_path}\n")
    with open(csv_path) as f:
        out.write(f.read())
    out.flush()
    return EXIT_INFRA if any_infra else EXIT_OK


def main(args, root, lab, ids):
    """Called by cli.main for --cluster / --batch; returns the exit status."""
    cwd = os.environ.get("COMMLAB_GRADE_CWD") or os.getcwd()
    for name in ("batch", "out"):
        if getattr(args, name, None):
            setattr(args, name, os.path.join(cwd, getattr(args, name)))
    if args.batch:
        return grade_batch(root, lab, args.batch, args.out)
    return grade_cluster(root, lab, ids, args)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "job":
        sys.exit(job_main(sys.argv[2:]))
    sys.stderr.write("usage: python3 -m gradelib.cluster job ... (used by Slurm jobs)\n")
    sys.exit(2)
