"""Runs a lab's checks in order: skips, parent and correctness gating, verdicts, logs."""

import fcntl
import os
import shutil
import sys
import time
import traceback
from dataclasses import dataclass

from . import admission
from . import build as buildmod
from . import integrity
from . import runner
from . import sandbox
from .backends import Detector, unmet_need
from .context import Context
from .progress import Progress
from .select import run_order
from .timer import TIMER
from .verdicts import (BUILD_ERROR, FAIL, PASS, SKIP, CheckFailed, CheckSkipped, Outcome)


@dataclass
class Options:
    """How to grade: where, which binary, which backends, how chatty."""

    root: str
    solution: bool = False
    source: str = None
    backends: list = None            # --backend restriction, None = all
    verbose: bool = False
    build: bool = True               # False: use the binary already built
    detector: Detector = None
    progress: object = None          # stream for progress lines (stderr)
    official: bool = False           # --official: no knobs from the environment
    timeout_cap: float = None        # every check's limit at most this (tests; not official)


class Engine:
    """Grades one lab: build, then each check of the run order, then clean-up."""

    def __init__(self, lab, options):
        self.lab = lab
        self.opt = options
        self.detector = options.detector or Detector()
        self.report_dir = os.path.join(options.root, "build", "grade", lab.name)
        self.outcomes = {}
        self.build = None
        self.used_backends = []
        self.integrity = []              # problems found in the student's object file
        self.limits = sandbox.default_limits()
        self.limits.official = options.official
        self.limits.run_as = sandbox.unprivileged_uid(options.official)

    def run(self, selected):
        """Grades the selected check ids and returns the Outcomes in run order."""
        order = run_order(self.lab, set(selected))
        os.makedirs(self.report_dir, exist_ok=True)
        stream = self.opt.progress if self.opt.progress is not None else sys.stderr
        # One ./grade of a lab at a time per tree: they would share build/grade/<lab>/.
        self._lock = open(os.path.join(self.report_dir, ".lock"), "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            stream.write(f"waiting for another ./grade {self.lab.name} in this tree\n")
            stream.flush()
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        try:
            return self._run(order, selected, stream)
        finally:
            self._lock.close()

    def _run(self, order, selected, stream):
        echo = stream if self.opt.verbose else None
        self.build = self._build(stream, echo)
        if self.build.ok:
            self.integrity = integrity.scan(self.build.program, self.opt.root,
                                            getattr(self.lab, "allow", ()))
            if self.integrity:
                stream.write("integrity: " + "; ".join(self.integrity) + "\n")
        progress = Progress(stream, len(order), max(len(c.id) for c in order) if order else 8,
                            self.opt.verbose)
        for i, chk in enumerate(order, 1):
            scored = chk.id in selected
            progress.start(i, chk)
            self._progress = progress
            t0 = time.monotonic()
            out = self._grade(chk, echo)
            out.elapsed = time.monotonic() - t0 - out.waited
            out.scored = scored
            self.outcomes[chk.id] = out
            self._keep_log(out)
            progress.end(i, out)
        self._cleanup()
        return [self.outcomes[c.id] for c in order]

    # ---- build -----------------------------------------------------------------------
    def _build(self, stream, echo):
        if not self.opt.build:
            _, program = buildmod.plan(self.opt.root, self.lab.name, self.lab.program,
                                       self.opt.solution, self.opt.source,
                                       os.path.join(self.report_dir, "_build"),
                                       self.opt.official)
            return buildmod.Build(True, program, "(build skipped)")
        argv, _ = buildmod.plan(self.opt.root, self.lab.name, self.lab.program,
                                self.opt.solution, self.opt.source,
                                os.path.join(self.report_dir, "_build"), self.opt.official)
        stream.write(f"building {self.lab.name}: {runner.repro_line(argv, self.opt.root)}\n")
        stream.flush()
        ticket = admission.Ticket(1, False, f"build {self.lab.name}")
        ticket.acquire(lambda pos: stream.write(f"  queued for the machine ({pos} ahead)\n"))
        try:
            b = buildmod.build(self.opt.root, self.lab.name, self.lab.program, self.report_dir,
                               self.opt.solution, self.opt.source, echo, self.opt.official)
        finally:
            ticket.release()
        log = os.path.join(self.report_dir, "build.log")
        with open(log, "w") as f:
            f.write(f"$ {b.command}\n{b.output}\n")
        if not b.ok:
            stream.write(f"build failed: see {os.path.relpath(log, self.opt.root)}\n")
        return b

    # ---- one check -------------------------------------------------------------------
    def _grade(self, chk, echo):
        out = Outcome(check=chk)
        if not self.build.ok:
            out.verdict, out.message, out.command = BUILD_ERROR, self.build.message, \
                self.build.command
            return out
        reason = self._skip_reason(chk)
        if reason:
            out.verdict, out.message = SKIP, "skipped: " + reason
            out.backend_missing = reason.startswith(f"{chk.backend} backend not available")
            return out
        if self.integrity:
            out.verdict = FAIL
            out.message = ("not run: your file makes calls no student program may make (docs/integrity.md):\n  "
                           + "\n  ".join(self.integrity))
            return out
        gate = self._gate(chk)
        if gate:
            out.verdict, out.message = gate
            return out
        if chk.backend not in self.used_backends:
            self.used_backends.append(chk.backend)
        return self._execute(chk, out, echo)

    def _skip_reason(self, chk):
        if self.opt.backends is not None and chk.backend not in self.opt.backends:
            return f"backend {chk.backend} not selected (--backend {','.join(self.opt.backends)})"
        need = unmet_need(chk.needs, self.detector)
        if need:
            return need
        b = self.detector.get(chk.backend)
        if not b.available:
            return f"{chk.backend} backend not available: {b.reason}"
        return None

    def _gate(self, chk):
        """Returns (verdict, message) when a parent or correctness check blocks chk."""
        if chk.parent is not None:
            p = self.outcomes[chk.parent]
            if p.skipped and p.backend_missing and p.check.backend != chk.backend:
                # A gate of another backend that this machine lacks (a build check on the
                # cpu backend, on a GPU machine without MPI) neither passes nor fails here:
                # it does not stop a check whose own backend is present. Its value is None.
                return None
            if p.skipped:
                return SKIP, f"skipped: parent {p.check.id} was skipped ({_strip(p.message)})"
            if not p.passed:
                return FAIL, f"not run: parent {p.check.id} failed"
        if chk.is_performance:
            bad = [d.id for d in self.lab.dependencies(chk)
                   if d.kind == "correctness" and self.outcomes[d.id].failed]
            if bad:
                return FAIL, f"not run: correctness checks failed: {', '.join(bad)}"
        return None

    def _execute(self, chk, out, echo):
        parent = self.outcomes.get(chk.parent) if chk.parent else None
        ctx = Context(self.lab, chk, self.opt.root, self.build.program, self.report_dir,
                      backends=self.detector.cache, resources=self.detector.resources(),
                      solution=self.opt.solution, verbose=self.opt.verbose, echo=echo,
                      inherited_commands=parent.commands if parent else (),
                      limits=self.limits)
        out.commands = ctx.commands
        units, alone = admission.units_for(chk)
        ticket = admission.Ticket(units, alone, f"{self.lab.name} {chk.id}")
        # Time spent waiting for the machine is not part of the check's limit.
        out.waited = ticket.acquire(getattr(self, "_progress", None) and self._progress.queued)
        ctx.ticket = ticket
        try:
            try:
                limit = chk.timeout
                if self.opt.timeout_cap and not self.opt.official:
                    limit = min(limit, self.opt.timeout_cap)
                if not self.opt.official:
                    limit *= buildmod.slowdown()
                TIMER.arm(limit)
                value = chk.func(ctx, parent.value) if parent else chk.func(ctx)
            finally:
                TIMER.disarm()
                ctx.close()
                ticket.release()
                out.waited += ctx.waited
            out.value = value
            self._score(chk, ctx, out)
        except CheckSkipped as e:
            out.verdict, out.message = SKIP, "skipped: " + e.reason
        except CheckFailed as e:
            out.verdict, out.message = e.verdict, e.render()
            out.command = e.command or (ctx.commands[-1] if ctx.commands else None)
            if ctx.perf_messages:
                out.message += "\n" + "\n".join(ctx.perf_messages)
        except Exception as e:      # a bug in the spec, or something it did not expect
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next))
            ctx.log_lines.append(tb)
            out.verdict = FAIL
            out.message = f"error in the check: {type(e).__name__}: {e}\n" + \
                "\n".join(tb.strip().splitlines()[-5:-1])
            out.command = ctx.commands[-1] if ctx.commands else None
        out.metrics, out.plots, out.log_lines = ctx.metrics, ctx.plots, ctx.log_lines
        return out

    def _score(self, chk, ctx, out):
        if chk.partial and ctx.perf_fractions:
            frac = sum(ctx.perf_fractions) / len(ctx.perf_fractions)
            out.score = round(chk.points * frac, 2)
            out.verdict = PASS if out.score >= chk.points else FAIL
            out.message = "\n".join(ctx.perf_messages)
            if out.verdict != PASS:
                out.command = ctx.commands[-1] if ctx.commands else None
        else:
            out.verdict, out.score = PASS, chk.points

    # ---- logs and clean-up ------------------------------------------------------------
    def _log_path(self, chk):
        return os.path.join(self.report_dir, chk.id + ".log")

    def _keep_log(self, out):
        path = self._log_path(out.check)
        if out.verdict == BUILD_ERROR:
            out.log_path = os.path.join(self.report_dir, "build.log")
            return
        if not out.failed:
            if os.path.exists(path):
                os.remove(path)
            return
        out.log_path = path
        with open(path, "w") as f:
            f.write(f"{out.check.id}: {out.check.title}\nverdict: {out.verdict} "
                    f"({_fmt(out.score)}/{_fmt(out.check.points)})\n\n{out.message}\n")
            if out.command:
                f.write(f"\nreproduce (from the repo root):\n  {out.command}\n")
            for line in out.log_lines:
                f.write("\n" + line + "\n")
            if out.metrics:
                f.write(f"\nmetrics: {out.metrics}\n")

    def _cleanup(self):
        """Removes the work dirs of passed or skipped checks (unless -v), keeping those a
        failed check depends on."""
        if self.opt.verbose:
            return
        keep = set()
        for out in self.outcomes.values():
            if out.failed:
                keep.add(out.check.id)
                keep.update(d.id for d in self.lab.dependencies(out.check))
        for cid in self.outcomes:
            d = os.path.join(self.report_dir, cid)
            if os.path.isdir(d) and (cid not in keep or not os.listdir(d)):
                shutil.rmtree(d, ignore_errors=True)


def _strip(msg):
    return msg[len("skipped: "):] if msg.startswith("skipped: ") else msg


def _fmt(x):
    return f"{x:.2f}".rstrip("0").rstrip(".")
