"""The ctx object handed to every check: paths, commands, metrics, logs and plots."""

import dataclasses
import json
import os
import shutil

from . import admission
from . import build as buildmod
from . import plot as plotmod
from . import netns, runner
from .mpi import MPI_ENV
from . import sandbox
from .timer import TIMER
from .verdicts import CheckCrashed, CheckFailed, CheckSkipped, CheckTimeout

# Exit statuses of a lab's program (common/result.h) beside 0, 1 and 2.
EXIT_TIMEOUT = 3          # the deadline passed
EXIT_UNSUPPORTED = 4      # the backend cannot run here (no GPU backend in this build, ...)
DEADLINE_MARGIN = 5.0     # seconds the program's deadline keeps from the check's limit: the
                          # watchdog's grace (2 s) and mpirun's start and end



class Context:
    """Everything a check may use. One Context per check run.

    Attributes: lab (name), spec (the Lab), check (the Check), root (repo root), program
    (path of the built lab binary), workdir (build/grade/<lab>/<check-id>/), report_dir
    (build/grade/<lab>/), solution (True with --solution), backends (name -> Backend),
    resources (gpus, nics, cpus, nodes found), verbose.
    """

    def __init__(self, spec, check, root, program, report_dir, backends=None, resources=None,
                 solution=False, verbose=False, echo=None, inherited_commands=(), limits=None):
        self.spec = spec
        self.lab = spec.name
        self.check = check
        self.root = root
        self.program = program
        self.report_dir = report_dir
        self.workdir = os.path.join(report_dir, check.id)
        self.backends = backends or {}
        self.resources = resources or {}
        self.solution = solution
        self.verbose = verbose
        self.echo = echo
        self.commands = list(inherited_commands)   # repro lines, parent's first
        self.results = []
        self.log_lines = []
        self.metrics = {}
        self.plots = []
        self.perf_fractions = []
        self.perf_messages = []
        self._background = []
        self.ticket = None         # this check's share of the machine (admission.py)
        self.waited = 0.0          # seconds it queued for more of it while running
        # Limits of every command the check runs (sandbox.py).
        self.limits = dataclasses.replace(limits or sandbox.default_limits())
        if check.backend == "gpu":
            self.limits.mem_mb = 0      # the CUDA driver reserves far more address space
        if self.limits.jail_root is None and not getattr(spec, "no_jail", False):
            self.limits.jail_root = root
            self.limits.jail_hide = tuple(sandbox.hidden_dirs(root, solution))
        if os.path.isdir(self.workdir):
            shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir, exist_ok=True)

    # ---- paths and data -------------------------------------------------------------
    def out(self, name):
        """Returns the path of `name` in this check's private work directory."""
        return os.path.join(self.workdir, name)

    def load_json(self, name):
        """Returns the parsed JSON file ctx.out(name). Raises CheckFailed if it is missing
        or not valid JSON, naming the command that should have written it."""
        path = self.out(name)
        rel = os.path.relpath(path, self.root)
        if not os.path.isfile(path):
            raise CheckFailed(f"output file {rel} was not written",
                              expected=f"the program writes {rel}", found="no such file")
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (ValueError, UnicodeDecodeError) as e:
            with open(path, "rb") as f:
                head = f.read(400).decode("utf-8", "replace")
            raise CheckFailed(f"output file {rel} is not valid JSON", expected="valid JSON",
                              found=str(e), details="file begins with:\n" + head) from None

    # ---- running commands ------------------------------------------------------------
    def run(self, argv, timeout=None, env=None, input=None, check=True, shown_env=None):
        """Runs argv from the repo root under this check's limit and returns a Result.

        With check=True (default) a crash raises CheckCrashed, a timeout CheckTimeout, and a
        non-zero exit CheckFailed with the last lines of stderr. With check=False only the
        check's own time limit raises; everything else is left to the caller.
        """
        left = TIMER.remaining()
        if left <= 0:
            raise TIMER.expired_error("starting " + os.path.basename(str(argv[0])))
        limit = left if timeout is None else min(timeout * buildmod.slowdown(), left)
        run_env = env
        if buildmod.sanitizers() and not self.limits.official:
            # sanitizer builds of the student's program are dynamic and cannot be filtered
            run_env = dict(env or {}, COMMLAB_SANITIZE="1")
        with TIMER.critical():
            try:
                res = runner.run(argv, cwd=self.root, workdir=self.workdir, timeout=limit,
                                 env=run_env, input=input, root=self.root,
                                 shown_env=shown_env if shown_env is not None else (env or {}),
                                 echo=self.echo, limits=self.limits)
            except OSError as e:
                raise CheckFailed(f"cannot run {argv[0]}: {e.strerror}",
                                  command=runner.repro_line(argv, self.root, shown_env or env))
        self.commands.append(res.command)
        self.results.append(res)
        self._log_result(res)
        check_limit_hit = res.timed_out and (timeout is None or
                                             timeout * buildmod.slowdown() >= left)
        if check_limit_hit:
            err = TIMER.expired_error("running a command")
            err.command = res.command
            err.details = _tail_block(res)
            raise err
        if check:
            self.require_ok(res)
        return res

    def mpirun(self, args, ranks=2, timeout=None, env=None, check=True, mpi_args=(),
               program=None):
        """Runs `mpirun -np ranks [--oversubscribe] [mpi_args] <program> args...` with the
        course's Open MPI settings (MPI_ENV) and returns its Result, as run() does."""
        prog = program or self.program
        if self.ticket is not None:
            with TIMER.stopped():
                self.waited += self.ticket.grow(admission.MPI_UNITS)
        argv = ["mpirun", "-np", str(ranks)]
        if ranks > (os.cpu_count() or 1):
            argv.append("--oversubscribe")
        argv += list(mpi_args) + [prog] + [str(a) for a in args]
        full_env = dict(MPI_ENV)
        full_env.update(env or {})
        return self.run(argv, timeout=timeout, env=full_env, check=check)

    def netrun(self, args, nodes=2, ranks_per_node=1, rate="1gbit", rails=1, **kw):
        """Runs the program with MPI across emulated nodes (net backend, netns.py) and
        returns its Result, as mpirun() does."""
        return netns.netrun(self, args, nodes, ranks_per_node, rate, rails, **kw)

    # ---- running the lab's program ------------------------------------------------------
    def run_lab(self, mode, args=(), ranks=None, backend=None, timeout=None, env=None,
                name=None, mpi_args=()):
        """Runs the lab's program in `mode` and returns its results (the --json dict).

        backend None runs one process (a cases mode); "cpu" and "gpu" run `ranks` processes
        under mpirun (one, without mpirun, when ranks is None); "sim" runs one process
        simulating `ranks` ranks. The program gets --json and a --deadline a little inside
        the check's limit, so it stops by itself and says what it was doing.

        Raises CheckCrashed when the student's code crashed, CheckTimeout when it ran out of
        time, CheckSkipped when the backend cannot run here (exit status 4), CheckFailed for
        any other failure or missing results.
        """
        name = name or f"{mode}-{backend or 'none'}{'-' + str(ranks) if ranks else ''}.json"
        out = self.out(name)
        left = TIMER.remaining()
        if timeout is not None:
            left = min(timeout * buildmod.slowdown(), left)
        argv = [mode, *[str(a) for a in args], "--json", out,
                "--deadline", f"{max(1.0, left - DEADLINE_MARGIN):.1f}"]
        if backend:
            argv += ["--backend", backend]
        if backend == "sim" and ranks:
            argv += ["--nranks", str(ranks)]
        if backend in ("cpu", "gpu") and ranks:
            res = self.mpirun(argv, ranks=ranks, timeout=timeout, env=env, check=False,
                              mpi_args=mpi_args)
        else:
            res = self.run([self.program, *argv], timeout=timeout, env=env, check=False)
        data = None
        if os.path.isfile(out):
            try:
                with open(out, encoding="utf-8") as f:
                    data = json.load(f)
            except (ValueError, UnicodeDecodeError):
                data = None
        if data is None:
            if res.rc == EXIT_UNSUPPORTED:
                raise CheckSkipped(res.stderr_tail(1) or "the backend cannot run here")
            if res.rc == EXIT_TIMEOUT:
                # the watchdog's last words name the rank and the wait it was in
                said = [ln.split("commlab: ", 1)[1] for ln in (res.stderr + res.stdout).splitlines()
                        if "commlab: deadline reached" in ln]
                raise CheckTimeout("your code did not finish before the deadline",
                                   expected="it finishes in time",
                                   found="\n    ".join(said[:4]) or res.stderr_tail(3),
                                   command=res.command)
            self.require_ok(res)
            raise CheckFailed("the program wrote no results", expected=os.path.basename(out),
                              found="no file", command=res.command, details=_tail_block(res))
        status, why = data.get("status"), data.get("error", "")
        if status == "ok":
            return data
        if status == "unsupported":
            raise CheckSkipped(why or "the backend cannot run here")
        if status == "crashed":
            raise CheckCrashed(why, expected="your code finishes normally", found="it crashed",
                               command=res.command, details=_tail_block(res))
        if status == "timeout":
            raise CheckTimeout(why, expected="your code finishes in time",
                               found="it ran out of time", command=res.command,
                               details=_tail_block(res))
        raise CheckFailed(f"the program failed: {why}", expected="it runs to the end",
                          found=status or "no status", command=res.command,
                          details=_tail_block(res))

    def sanitizer_subset(self, items, keep=2):
        """All of items, or under the sanitizers (COMMLAB_GRADE_SAN=1) only `keep` of them,
        spread from first to last. For the candidates a decision check tries, the machines
        it is scored on, the points it draws: that suite asks whether every code path is
        memory-safe, not how good a choice is, and each item runs the same paths. A
        thinner grid can only make its best point worse, and fewer machines or points only
        leave fewer cases to score: a correct choice never loses marks by it."""
        items = list(items)
        if not buildmod.sanitizers() or len(items) <= keep:
            return items
        if keep <= 1:
            return items[:1]
        step = (len(items) - 1) / (keep - 1)
        return [items[round(i * step)] for i in range(keep)]

    def run_cases(self, mode, cases, name=None, timeout=None):
        """Runs a cases mode on `cases` (dicts of key: value), one line each in a cases file,
        and returns the rows, one per case, in order."""
        name = name or mode
        path = self.out(name + ".cases")
        with open(path, "w", encoding="utf-8") as f:
            for case in cases:
                f.write(" ".join(f"{k}={v!r}" if isinstance(v, float) else f"{k}={v}"
                                 for k, v in case.items()) + "\n")
        data = self.run_lab(mode, ["--cases", path], name=name + ".json", timeout=timeout)
        rows = data.get("rows", [])
        if len(rows) != len(cases):
            raise CheckFailed(f"{mode}: {len(rows)} results for {len(cases)} cases",
                              expected=str(len(cases)), found=str(len(rows)))
        return rows

    def require_ok(self, res):
        """Raises the right exception unless the Result exited 0 without a signal."""
        if res.proc_limit:
            raise CheckFailed(f"the command started more than {self.limits.max_procs} "
                              f"processes and was stopped", expected="a bounded number of "
                              "processes", found="a fork storm", command=res.command)
        if res.timed_out:
            raise CheckTimeout(f"command timed out after {res.elapsed:.1f} s",
                               expected="command finishes in time", found="still running",
                               command=res.command, details=_tail_block(res))
        if res.output_limit:
            raise CheckFailed(f"command wrote more than {runner.HARD_CAP_BYTES >> 20} MiB of "
                              f"output and was stopped", command=res.command)
        if res.crashed:
            who = f"rank {res.rank}" if res.rank is not None else "the program"
            raise CheckCrashed(f"{who} was killed by signal {res.signal} ({res.signal_name})",
                               expected="normal exit", found=f"signal {res.signal}",
                               command=res.command, details=_tail_block(res))
        if res.rc == EXIT_UNSUPPORTED and self.program in (res.argv or ()):
            # The lab's own program says this machine or build cannot run it (no GPU
            # backend, no GPU): a skip, never a failure. Other commands' 4 is theirs.
            raise CheckSkipped(res.stderr_tail(1) or "the backend cannot run here")
        if res.rc != 0:
            raise CheckFailed(f"command exited with status {res.rc}", expected="exit status 0",
                              found=f"exit status {res.rc}", command=res.command,
                              details=_tail_block(res))

    def spawn(self, argv, env=None):
        """Starts argv in the background (e.g. a server) and returns a runner.Command;
        call .wait(timeout) for its Result. It is killed when the check ends."""
        cmd = runner.Command(argv, cwd=self.root, workdir=self.workdir,
                             env=env, shown_env=env, root=self.root,
                             echo=self.echo, limits=self.limits)
        with TIMER.critical():
            cmd.start()
            self._background.append(cmd)
        self.commands.append(cmd.command)
        return cmd

    def close(self):
        """Kills background processes still running (called by the harness)."""
        with TIMER.critical():
            for cmd in self._background:
                if cmd.proc is not None and cmd.proc.returncode is None:
                    self._log_result(cmd.stop())
            self._background = []

    # ---- results ---------------------------------------------------------------------
    def metric(self, name, value):
        """Attaches a metric (number, string or list) to this check's results."""
        self.metrics[name] = value

    def log(self, text):
        """Adds a line to this check's log (shown with -v, kept for failed checks)."""
        self.log_lines.append(str(text))
        if self.echo:
            self.echo.write(f"  | {text}\n")
            self.echo.flush()

    def skip(self, reason):
        """Stops the check as SKIP (only for missing hardware or backends)."""
        raise CheckSkipped(reason)

    def plot(self, name, series, xlabel="", ylabel="", logx=True, logy=False, title=None):
        """Draws series {"label": [(x, y), ...]} to build/grade/<lab>/<name>.png with gnuplot.
        Returns the png path, or None when gnuplot is missing (the report says so)."""
        path, note = plotmod.plot(self.report_dir, name, series, xlabel, ylabel, logx, logy,
                                  title or name)
        self.plots.append(note.replace(self.root.rstrip("/") + "/", ""))
        return path

    def _log_result(self, res):
        self.log_lines.append(f"$ {res.command}\n  exit {res.rc}, {res.elapsed:.2f} s"
                              + (", timed out" if res.timed_out else "")
                              + (f", signal {res.signal}" if res.signal else ""))
        for label, text in (("stdout", res.stdout), ("stderr", res.stderr)):
            if text:
                self.log_lines.append(f"--- {label} ---\n{text.rstrip()}")


def _tail_block(res, n=20):
    tail = res.stderr_tail(n)
    return f"last lines of output:\n{tail}" if tail else "the command printed nothing"
