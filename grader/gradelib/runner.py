"""Runs one command in its own process group, output to files, under a time limit."""

import os
import re
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

from . import sandbox

KEEP_BYTES = 256 * 1024            # output kept per stream (head + tail)
KEEP_HEAD = 32 * 1024
HARD_CAP_BYTES = sandbox.DEFAULT_FSIZE  # a command writing more than this is stopped
KILL_GRACE = 2.0                   # seconds between SIGTERM and SIGKILL
POLL = 0.05

_MPI_RANK_SIGNAL = re.compile(
    r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)(?: \(([^)]*)\))?")
_ANY_SIGNAL = re.compile(r"exited on signal (\d+)(?: \(([^)]*)\))?")


@dataclass
class Result:
    """A finished command. signal is set when it (or an MPI rank) died on a signal."""

    rc: int
    stdout: str
    stderr: str
    command: str                    # shell line reproducing the command from the repo root
    elapsed: float
    timed_out: bool = False
    signal: int = None
    signal_name: str = None
    rank: int = None                # MPI rank that died on the signal, when known
    truncated: bool = False         # some output was dropped from stdout/stderr
    output_limit: bool = False      # stopped for writing more than HARD_CAP_BYTES
    argv: list = None
    proc_limit: bool = False        # stopped for running more than limits.max_procs processes
    strays: int = 0                 # processes still running after the main one ended
    jailed: bool = False            # ran in the jail: a death by signal N reads as 128 + N

    @property
    def crashed(self):
        return self.signal is not None

    @property
    def ok(self):
        return (self.rc == 0 and not self.timed_out and not self.crashed
                and not self.output_limit and not self.proc_limit)

    def stderr_tail(self, n=20):
        """Returns the last n lines of stderr (or of stdout when stderr is empty)."""
        text = self.stderr.strip() or self.stdout.strip()
        return "\n".join(text.splitlines()[-n:])


def signal_name(num):
    """Returns e.g. 'SIGSEGV' for 11, or 'signal N' when unknown."""
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def repro_line(argv, root, env=None, stdin_path=None):
    """Returns a shell-quoted line running argv from the repo root, env vars first."""
    def rel(s):
        s = str(s)
        prefix = root.rstrip("/") + "/"
        return s.replace(prefix, "") if root else s
    words = [f"{k}={shlex.quote(rel(v))}" for k, v in (env or {}).items()]
    line = " ".join(words + [shlex.quote(rel(a)) for a in argv])
    if stdin_path:
        line += " < " + shlex.quote(rel(stdin_path))
    return line


def read_kept(path, keep=KEEP_BYTES, head=KEEP_HEAD):
    """Returns (text, truncated): the whole file, or its head and tail when larger than keep."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return "", False
    with open(path, "rb") as f:
        if size <= keep:
            return f.read().decode("utf-8", "replace"), False
        first = f.read(head)
        f.seek(size - (keep - head))
        last = f.read()
    mark = f"\n[... {size - len(first) - len(last)} bytes of output omitted ...]\n".encode()
    return (first + mark + last).decode("utf-8", "replace"), True


def kill_group(pgid):
    """Sends SIGTERM to the process group, then SIGKILL after KILL_GRACE seconds if any
    member is left. Never fails."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    end = time.monotonic() + KILL_GRACE
    while time.monotonic() < end:
        if not _group_alive(pgid):
            return
        time.sleep(POLL)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid):
    """True while some non-zombie process is in the group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return not os.path.isdir("/proc")


class _Tail(threading.Thread):
    """Copies new output from files to a stream while a command runs (for -v)."""

    def __init__(self, paths, stream):
        super().__init__(daemon=True)
        self.paths, self.stream = paths, stream
        self.offsets = [0] * len(paths)
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.pump()
            self.done.wait(0.1)
        self.pump()

    def pump(self):
        for i, p in enumerate(self.paths):
            try:
                with open(p, "rb") as f:
                    f.seek(self.offsets[i])
                    data = f.read(1 << 20)
            except OSError:
                continue
            if data:
                self.offsets[i] += len(data)
                self.stream.write(data.decode("utf-8", "replace"))
                self.stream.flush()


class Command:
    """One process group: start(), then wait() or stop(). Output goes to files in workdir."""

    _seq = 0
    _live = set()                   # pids of main processes still running (all commands)

    def __init__(self, argv, cwd, workdir, env=None, input=None, root=None,
                 shown_env=None, echo=None, limits=None):
        Command._seq += 1
        self.limits = limits or sandbox.Limits(scrub_env=False, private_tmp=False,
                                               mem_mb=0, max_procs=0, fsize=HARD_CAP_BYTES)
        self.dirs = None
        self.proc_limit = False
        self.argv = [str(a) for a in argv]
        self.cwd = cwd
        self.env = env or {}
        self.workdir = workdir
        self.echo = echo
        base = f"cmd{Command._seq:03d}-{os.path.basename(self.argv[0])[:24]}"
        self.out_path = os.path.join(workdir, base + ".out")
        self.err_path = os.path.join(workdir, base + ".err")
        self.in_path = None
        if input is not None:
            self.in_path = os.path.join(workdir, base + ".in")
            with open(self.in_path, "wb") as f:
                f.write(input.encode() if isinstance(input, str) else input)
        shown = self.env if shown_env is None else shown_env
        self.command = repro_line(self.argv, root or cwd, shown, self.in_path)
        self.proc = None
        self.start_time = None
        self.tail = None
        self.jailed = False

    def start(self):
        """Starts the process in a new session. Raises OSError if it cannot be executed."""
        os.makedirs(self.workdir, exist_ok=True)
        sandbox.become_subreaper()
        if self.limits.scrub_env:
            env = sandbox.clean_env(os.environ, sandbox.extra_keep_names(self.limits.official))
        else:
            env = dict(os.environ)
        if self.limits.private_tmp:
            self.dirs = sandbox.PrivateDirs()
            env.update(self.dirs.env())
        if self.limits.run_as is not None:     # official grading as root: the user's files
            sandbox.give(self.limits.run_as, self.workdir, *self.limits.jail_writable,
                         *(self.dirs.paths() if self.dirs else ()))
        env.update({k: str(v) for k, v in self.env.items()})
        if self.echo:
            self.echo.write(f"$ {self.command}\n")
            self.echo.flush()
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            stdin = open(self.in_path, "rb") if self.in_path else subprocess.DEVNULL
            try:
                self.start_time = time.monotonic()
                argv = self.argv
                jailed = bool(self.limits.jail_root and sandbox.jail_available())
                self.jailed = jailed
                if jailed:
                    argv = sandbox.jail_argv(argv, self.limits.jail_root, self.workdir,
                                             self.limits.jail_hide, self.limits.jail_writable,
                                             self.limits.run_as)
                self.proc = subprocess.Popen(argv, cwd=self.cwd, env=env, stdin=stdin,
                                             stdout=out, stderr=err, start_new_session=True,
                                             preexec_fn=sandbox.preexec(self.limits,
                                                                        switch_user=not jailed))
                Command._live.add(self.proc.pid)
            except BaseException:
                if self.dirs:
                    self.dirs.remove()
                raise
            finally:
                if self.in_path:
                    stdin.close()
        if self.echo:
            self.tail = _Tail([self.out_path, self.err_path], self.echo)
            self.tail.start()

    def wait(self, timeout):
        """Waits up to timeout seconds (None: no limit), kills the group and returns Result."""
        end = None if timeout is None else self.start_time + max(timeout, 0)
        timed_out = over_cap = False
        next_count = time.monotonic() + 0.5
        while True:
            try:
                self.proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            if end is not None and time.monotonic() >= end:
                timed_out = True
                break
            if self._written() > HARD_CAP_BYTES:
                over_cap = True
                break
            if self.limits.max_procs and time.monotonic() >= next_count:
                next_count = time.monotonic() + 0.5
                if self.count_processes() > self.limits.max_procs:
                    self.proc_limit = True
                    break
        return self.stop(timed_out, over_cap)

    def count_processes(self):
        """Number of live processes of this command (descendants, group, session)."""
        table = sandbox.process_table()
        return len(sandbox.command_processes(table, self.proc.pid))

    def poll(self):
        """Returns True once the main process has exited."""
        return self.proc.poll() is not None

    def stop(self, timed_out=False, over_cap=False):
        """Kills the whole group, reaps the process and returns its Result."""
        if self.proc_limit:
            # a fork storm: stop it at once rather than give it the SIGTERM grace
            sandbox.sweep(self.proc.pid, exclude=Command._live - {self.proc.pid})
        kill_group(self.proc.pid)
        try:
            rc = self.proc.wait(timeout=KILL_GRACE + 1)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        Command._live.discard(self.proc.pid)
        # Processes that left the group (setsid, double fork) are found and killed too.
        strays = sandbox.sweep(self.proc.pid, exclude=set(Command._live))
        if self.dirs:
            self.dirs.remove()
        elapsed = time.monotonic() - self.start_time
        if self.tail:
            self.tail.done.set()
            self.tail.join()
        out, t1 = read_kept(self.out_path)
        err, t2 = read_kept(self.err_path)
        for p in (self.out_path, self.err_path):
            try:
                os.remove(p)
            except OSError:
                pass
        if rc == -signal.SIGXFSZ:       # hit RLIMIT_FSIZE: the output cap
            over_cap = True
        res = Result(rc=rc, stdout=out, stderr=err, command=self.command, elapsed=elapsed,
                     timed_out=timed_out, truncated=t1 or t2, output_limit=over_cap,
                     argv=self.argv, proc_limit=self.proc_limit, strays=strays,
                     jailed=self.jailed)
        if not timed_out and not over_cap and not self.proc_limit:
            _find_crash(res)
            if res.signal == signal.SIGXFSZ:
                res.output_limit, res.signal, res.signal_name = True, None, None
        return res

    def _written(self):
        total = 0
        for p in (self.out_path, self.err_path):
            try:
                total += os.path.getsize(p)
            except OSError:
                pass
        return total


def _find_crash(res):
    """Sets res.signal/rank when the process died on a signal or mpirun reports a rank did."""
    if res.rc is not None and res.rc < 0:
        res.signal = -res.rc
        res.signal_name = signal_name(res.signal)
        return
    if res.jailed and res.rc is not None and 128 < res.rc <= 128 + 64:
        res.signal = res.rc - 128
        res.signal_name = signal_name(res.signal)
        return
    text = res.stderr + "\n" + res.stdout
    m = _MPI_RANK_SIGNAL.search(text)
    if m:
        res.rank = int(m.group(1))
        res.signal = int(m.group(2))
        res.signal_name = m.group(3) or signal_name(res.signal)
        return
    m = _ANY_SIGNAL.search(text)
    if m and res.rc != 0:
        res.signal = int(m.group(1))
        res.signal_name = m.group(2) or signal_name(res.signal)


def run(argv, cwd, workdir, timeout=None, env=None, input=None, root=None, shown_env=None,
        echo=None, limits=None):
    """Runs argv to completion (or timeout) and returns its Result; never leaves a process
    of its own behind. limits (sandbox.Limits) adds rlimits, a scrubbed environment and a
    private TMPDIR; None runs it as the grader's own helper. Raises OSError if argv[0]
    cannot be executed."""
    cmd = Command(argv, cwd, workdir, env=env, input=input, root=root, shown_env=shown_env,
                  echo=echo, limits=limits)
    cmd.start()
    try:
        return cmd.wait(timeout)
    finally:
        if cmd.proc.returncode is None:
            kill_group(cmd.proc.pid)
            cmd.proc.wait()
            Command._live.discard(cmd.proc.pid)
            sandbox.sweep(cmd.proc.pid, exclude=set(Command._live))
            if cmd.dirs:
                cmd.dirs.remove()
