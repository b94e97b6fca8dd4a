"""Slurm client calls for --cluster and --batch: submit, queue state, final job state, cancel."""

import re
import shlex
import subprocess
import time

# Final job states that are the cluster's doing, never the student's (squeue/sacct JOB STATE
# CODES, https://slurm.schedmd.com/squeue.html#SECTION_JOB-STATE-CODES). TIMEOUT is here too:
# every check has its own limit inside the job, so only a slow or stuck node reaches the job's.
INFRA_STATES = {
    "NODE_FAIL": "a node of the job failed",
    "BOOT_FAIL": "a node of the job failed to boot",
    "PREEMPTED": "the job was preempted",
    "CANCELLED": "the job was cancelled",
    "DEADLINE": "the job reached its deadline",
    "REVOKED": "the job was revoked",
    "REQUEUED": "the job was requeued",
    "TIMEOUT": "the job's time limit was reached before the grader finished",
    "SPECIAL_EXIT": "the job ended in a special state",
}
ACTIVE_STATES = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
                 "RESIZING", "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED",
                 "RESV_DEL_HOLD", "STOPPED"}


class SlurmError(Exception):
    """A Slurm command failed (the message holds its output)."""


def call(argv, timeout=60, check=True):
    """Runs a Slurm client command; returns its stdout. Raises SlurmError when check is set
    and it fails or cannot be run."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SlurmError(f"{argv[0]}: {e}") from None
    if check and r.returncode != 0:
        raise SlurmError(f"{' '.join(shlex.quote(a) for a in argv)}: "
                         f"{(r.stderr or r.stdout).strip() or 'exit ' + str(r.returncode)}")
    return r.stdout


def sbatch(options, script):
    """Submits script (a path) with sbatch options; returns the job id (str)."""
    out = call(["sbatch", "--parsable"] + list(options) + [script])
    return out.strip().split(";")[0]


def queue(job_ids):
    """Returns {job id (as squeue prints it, e.g. 12 or 12_3): (state, reason, elapsed,
    nodes)} for the jobs still in the queue. Array tasks are listed one by one."""
    if not job_ids:
        return {}
    out = call(["squeue", "-h", "-r", "-j", ",".join(job_ids), "-o", "%i|%T|%r|%M|%N"],
               check=False)
    rows = {}
    for line in out.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 5:
            rows[parts[0]] = tuple(parts[1:])
    return rows


_KV = re.compile(r"(\w+)=(\S*)")


def final_states(job_id):
    """Returns {job id or <id>_<task>: {"state", "reason", "exit", "nodes"}} for a finished job
    (every task of an array), from scontrol, else sacct; {} when Slurm forgot it."""
    out = call(["scontrol", "-o", "show", "job", job_id], check=False)
    found = {}
    for line in out.splitlines():
        kv = dict(_KV.findall(line))
        if "JobState" not in kv:
            continue
        key = kv.get("JobId", job_id)
        if kv.get("ArrayTaskId") and kv.get("ArrayJobId"):
            key = f"{kv['ArrayJobId']}_{kv['ArrayTaskId']}"
        found[key] = {"state": kv["JobState"], "reason": kv.get("Reason", ""),
                      "exit": kv.get("ExitCode", ""), "nodes": kv.get("NodeList", "")}
    if found:
        return found
    out = call(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State,ExitCode,NodeList"],
               check=False)
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == 4:
            found[parts[0]] = {"state": parts[1].split()[0] if parts[1] else "UNKNOWN",
                               "reason": "", "exit": parts[2], "nodes": parts[3]}
    return found


def cancel(job_ids):
    """Cancels jobs (errors ignored)."""
    if job_ids:
        call(["scancel"] + list(job_ids), check=False, timeout=30)


# Pending reasons that will not go away by waiting (the request exceeds what the partition
# or the account allows).
NEVER_REASONS = {"PartitionNodeLimit", "PartitionTimeLimit", "BadConstraints", "InvalidQOS",
                 "InvalidAccount"}


def node_count(partition=""):
    """Returns how many nodes the partition (default: every partition) has, None when sinfo
    cannot say."""
    argv = ["sinfo", "-h", "-o", "%D"] + (["-p", partition] if partition else [])
    try:
        out = call(argv, timeout=30)
    except SlurmError:
        return None
    return sum(int(w) for w in out.split() if w.isdigit())


def gres_gpus():
    """Returns the largest count of gres/gpu on one node of the default partitions, 0 when
    there is none, None when sinfo cannot say."""
    try:
        out = call(["sinfo", "-h", "-o", "%G"], timeout=30)
    except SlurmError:
        return None
    best = 0
    for word in re.split(r"[,\s]+", out):
        m = re.match(r"gpu(?::[^:(]+)?:(\d+)", word)
        if m:
            best = max(best, int(m.group(1)))
    return best


class QueueWatch:
    """Prints the queue state of watched jobs to a stream when it changes, and a reminder
    line every `every` seconds while nothing changes."""

    def __init__(self, stream, every=60):
        self.stream = stream
        self.every = every
        self.last = None
        self.last_print = 0.0

    def show(self, rows, names):
        now = time.monotonic()
        view = sorted((jid, rows[jid][0], rows[jid][1]) for jid in rows)
        if view == self.last and now - self.last_print < self.every:
            return
        self.last, self.last_print = view, now
        if not rows:
            return
        self.stream.write("squeue: " + "; ".join(
            f"{jid} {names.get(jid.split('_')[0], '')} {st}"
            + (f" ({rs})" if rs and rs != "None" else "") + (f" {rows[jid][2]}" if st ==
                                                             "RUNNING" else "")
            for jid, st, rs in view) + "\n")
        self.stream.flush()
