"""Command line: ./grade LAB [FILTER ...] [options]; exit 0 at full marks, 1 below, 2 misuse."""

import argparse
import os
import shutil
import signal
import sys

from . import deps, official, report
from .backends import DETECTORS, Detector
from .engine import Engine, Options
from .progress import fmt_points
from .select import UnknownFilter, select
from .spec import SpecError, available_labs, load_lab

EXIT_OK, EXIT_BELOW, EXIT_USAGE = 0, 1, 2
TIMEOUT_CAP_ENV = "COMMLAB_GRADE_TIMEOUT_CAP"     # seconds; lowers every check's limit


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"grade: {message}\n")
        sys.exit(EXIT_USAGE)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def parser():
    p = _Parser(prog="grade", description="Build a lab and grade it.")
    p.add_argument("lab", nargs="?", help="lab name, e.g. lab01")
    p.add_argument("filters", nargs="*", metavar="FILTER",
                   help="check ids to run, by prefix or glob (e.g. cpu. or '*.fit')")
    p.add_argument("--solution", action="store_true", help="grade the reference solution")
    p.add_argument("--source", metavar="DIR", help="grade the student file(s) found in DIR")
    p.add_argument("--backend", metavar="LIST",
                   help="only use these backends (comma list of " + ",".join(DETECTORS) + ")")
    p.add_argument("--json", metavar="FILE", help="write results (Gradescope fields) to FILE")
    p.add_argument("--prairielearn", metavar="FILE",
                   help="also write PrairieLearn's results.json to FILE")
    p.add_argument("--autolab", action="store_true",
                   help="end the output with Autolab's scores line (JSON)")
    p.add_argument("--list", action="store_true", help="list the lab's checks and exit")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show commands and their output; keep all work dirs")
    p.add_argument("--no-install", action="store_true",
                   help="do not check or install the course's Debian packages")
    p.add_argument("--no-build", action="store_true", help="use the binary already built")
    p.add_argument("--official", metavar="STUDENT_DIR",
                   help="grade STUDENT_DIR's copy of the lab in a fresh build of this pristine "
                        "tree, taking only the student's source files from it")
    p.add_argument("--cluster", action="store_true",
                   help="run the checks as Slurm jobs (site settings: grader/cluster.conf)")
    p.add_argument("--batch", metavar="SUBMISSIONS",
                   help="grade every SUBMISSIONS/<student>/<lab>.c as a Slurm job array")
    p.add_argument("--out", metavar="DIR", help="with --batch: where results and the CSV go")
    p.add_argument("--root", metavar="DIR", help=argparse.SUPPRESS)
    return p


def _list(lab, ids, out):
    chosen = [c for c in lab.checks if c.id in ids]
    wid = max(len(c.id) for c in chosen)
    out.write(f"{lab.name}: {lab.title}\n")
    for c in chosen:
        kind = {"performance": " perf", "decision": " dec", "question": " q"}.get(c.kind, "")
        par = f" (after {c.parent})" if c.parent else ""
        out.write(f"  {c.id:<{wid}}  {fmt_points(c.points):>4} pts  {c.backend:<7}{kind:<5}  "
                  f"{c.title}{par}\n")
    out.write(f"total: {fmt_points(sum(c.points for c in chosen))} points\n")


def main(argv=None, default_root=None):
    """Runs the grader and returns the exit status."""
    # SIGTERM and SIGHUP end the run as Ctrl-C does, so that running commands are killed
    # and the temporary folders removed.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    args = parser().parse_intermixed_args(argv)
    cwd = os.environ.get("COMMLAB_GRADE_CWD") or os.getcwd()   # where the user typed ./grade
    for name in ("source", "json", "root", "official", "prairielearn"):
        if getattr(args, name):
            setattr(args, name, os.path.join(cwd, getattr(args, name)))
    root = os.path.abspath(args.root or default_root or cwd)
    labs = available_labs(root)
    if not args.lab:
        sys.stderr.write("usage: grade LAB [FILTER ...]; labs: " + (", ".join(labs) or "none")
                         + "\n")
        return EXIT_USAGE
    try:
        lab = load_lab(root, args.lab)
    except LookupError:
        sys.stderr.write(f"grade: unknown lab {args.lab!r}; known labs: "
                         f"{', '.join(labs) or 'none'}\n")
        return EXIT_USAGE
    except SpecError as e:
        sys.stderr.write(f"grade: bad lab spec: {e}\n")
        return EXIT_USAGE
    try:
        ids = select(lab, args.filters)
    except UnknownFilter as e:
        sys.stderr.write(f"grade: filter {e} matches no check of {lab.name}; checks: "
                         f"{', '.join(c.id for c in lab.checks)}\n")
        return EXIT_USAGE
    if args.list:
        _list(lab, ids, sys.stdout)
        return EXIT_OK
    backends = None
    if args.backend:
        backends = [b.strip() for b in args.backend.split(",") if b.strip()]
        bad = [b for b in backends if b not in DETECTORS]
        if bad:
            sys.stderr.write(f"grade: unknown backend(s) {', '.join(bad)}; known: "
                             f"{', '.join(DETECTORS)}\n")
            return EXIT_USAGE
    if args.source and not os.path.isdir(args.source):
        sys.stderr.write(f"grade: --source {args.source}: not a directory\n")
        return EXIT_USAGE
    if args.solution and args.source:
        sys.stderr.write("grade: --solution and --source exclude each other\n")
        return EXIT_USAGE
    if args.official and (args.solution or args.source or args.no_build):
        sys.stderr.write("grade: --official excludes --solution, --source and --no-build\n")
        return EXIT_USAGE
    if args.official and not os.path.isdir(args.official):
        sys.stderr.write(f"grade: --official {args.official}: not a directory\n")
        return EXIT_USAGE
    if args.cluster or args.batch:              # Slurm: gradelib/cluster.py
        from . import cluster
        return cluster.main(args, root, lab, ids)
    try:
        detector = Detector()
    except ValueError as e:
        sys.stderr.write(f"grade: {e}\n")
        return EXIT_USAGE
    if not args.no_install:
        try:
            deps.ensure(sys.stderr)
        except deps.DepsError as e:
            sys.stderr.write(f"grade: {e}\n(or rerun with --no-install to try anyway)\n")
            return EXIT_USAGE
    cap = None
    if not args.official and os.environ.get(TIMEOUT_CAP_ENV):
        try:
            cap = float(os.environ[TIMEOUT_CAP_ENV])
        except ValueError:
            sys.stderr.write(f"grade: {TIMEOUT_CAP_ENV} must be a number of seconds\n")
            return EXIT_USAGE
    tmp = None
    if args.official:
        try:
            tmp, root = official.prepare(root, lab, args.official)
            lab = load_lab(root, args.lab)
        except official.OfficialError as e:
            sys.stderr.write(f"grade: --official: {e}\n")
            return EXIT_USAGE
        sys.stderr.write(f"official grading of {args.official} in {root}\n")
    opts = Options(root=root, solution=args.solution, source=args.source, backends=backends,
                   verbose=args.verbose, build=not args.no_build, detector=detector,
                   official=bool(args.official), timeout_cap=cap)
    engine = Engine(lab, opts)
    try:
        outcomes = engine.run(ids)
    except KeyboardInterrupt:
        sys.stderr.write("\ngrade: interrupted\n")
        return 130
    finally:
        if tmp and not args.verbose:
            shutil.rmtree(tmp, ignore_errors=True)
    sys.stdout.write(report.text(lab, outcomes, root))
    sys.stdout.flush()
    if args.json:
        report.write_json(args.json, report.results(lab, outcomes, engine.used_backends, root))
    if args.prairielearn:
        report.write_json(args.prairielearn, report.prairielearn(lab, outcomes, root))
    if args.autolab:
        sys.stdout.write(report.autolab_line(outcomes) + "\n")
    return EXIT_OK if report.full_marks(outcomes) else EXIT_BELOW
