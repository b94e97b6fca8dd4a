"""Lab specs: the Lab object, its registry of checks, validation and loading by name."""

import importlib.util
import math
import os
import re

BACKENDS = ("cpu", "sim", "gpu", "nic", "net", "cluster")
# "question": 思考 questions graded from the lab's answers file (gradelib/answers.py): all or
# nothing, or a share per right answer (answers.score_answers).
# "decision": the student's choice scored by its modelled consequence (a ratio on a ramp, as
# perf_ratio/perf_samples/ramp give), computed, not timed: it needs no machine to itself and
# waits only for its parent, not for every correctness check of its backend.
# Neither gates a performance check.
KINDS = ("correctness", "performance", "question", "decision")
PARTIAL = ("performance", "question", "decision")   # kinds that may earn a share of points
NEED_KEYS = ("gpus", "nics", "cpus", "ranks", "nodes", "commands", "numa_nodes")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SpecError(Exception):
    """A lab spec is malformed (duplicate id, unknown parent, bad field ...)."""


class Check:
    """One graded check: metadata plus the function that runs it."""

    def __init__(self, lab, id, title, func, points=0, backend="cpu", timeout=60,
                 parent=None, needs=None, kind="correctness", timed=False):
        self.lab = lab
        self.id = id
        self.title = title
        self.func = func
        self.points = points
        self.backend = backend
        self.timeout = timeout
        self.parent = parent
        self.needs = dict(needs or {})
        self.kind = kind
        # What it measures is scored by a performance check (its child): it runs alone.
        self.timed = timed

    @property
    def is_performance(self):
        return self.kind == "performance"

    @property
    def partial(self):
        """Whether the check may earn a share of its points."""
        return self.kind in PARTIAL

    def __repr__(self):
        return f"Check({self.id!r})"


class Lab:
    """A lab's spec: name, title, binary name and its ordered checks.

    Use the check() decorator to register checks; ids must be unique within the lab.
    """

    def __init__(self, name, title="", program=None, allow=(), student_files=None):
        self.name = name
        self.title = title
        self.program = program if program is not None else name
        # integrity.py: calls the generic checks deny that this lab's students may make
        self.allow = tuple(allow)
        # the files a student writes (copied by ./grade --official), relative to the root
        self.student_files = list(student_files or [f"labs/{name}/{name}.c"])
        self.checks = []
        self._by_id = {}

    def check(self, id, title, points=0, backend="cpu", timeout=60, parent=None,
              needs=None, kind="correctness", timed=False):
        """Decorator registering func(ctx) (or func(ctx, parent_value)) as a check. timed:
        a performance check scores what this one measures, so it gets the machine alone.

        Raises SpecError at once for a duplicate id or an invalid field.
        """
        def register(func):
            chk = Check(self, id, title, func, points, backend, timeout, parent, needs, kind,
                        timed)
            self._validate_fields(chk)
            if id in self._by_id:
                raise SpecError(f"lab {self.name}: duplicate check id {id!r}")
            self.checks.append(chk)
            self._by_id[id] = chk
            return func
        return register

    def get(self, id):
        """Returns the check with this id, or None."""
        return self._by_id.get(id)

    def _validate_fields(self, chk):
        where = f"lab {self.name}, check {chk.id!r}"
        if not isinstance(chk.id, str) or not _ID_RE.match(chk.id):
            raise SpecError(f"{where}: id must match {_ID_RE.pattern}")
        if chk.id == "build":
            raise SpecError(f"{where}: the id 'build' is reserved (build/grade/<lab>/build.log)")
        if chk.backend not in BACKENDS:
            raise SpecError(f"{where}: unknown backend {chk.backend!r} (one of {BACKENDS})")
        if chk.kind not in KINDS:
            raise SpecError(f"{where}: unknown kind {chk.kind!r} (one of {KINDS})")
        if isinstance(chk.points, bool) or not isinstance(chk.points, (int, float)) \
                or chk.points < 0:
            raise SpecError(f"{where}: points must be a number >= 0")
        if isinstance(chk.points, float) and not math.isfinite(chk.points):
            raise SpecError(f"{where}: points must be a finite number")
        if isinstance(chk.timeout, bool) or not isinstance(chk.timeout, (int, float)) \
                or not chk.timeout > 0 or not math.isfinite(chk.timeout):
            raise SpecError(f"{where}: timeout must be > 0 seconds")
        if chk.parent is not None and not isinstance(chk.parent, str):
            raise SpecError(f"{where}: parent must be a check id (a string)")
        if not isinstance(chk.title, str):
            raise SpecError(f"{where}: title must be a string")
        for key in chk.needs:
            if key not in NEED_KEYS:
                raise SpecError(f"{where}: unknown need {key!r} (one of {NEED_KEYS})")
        if not callable(chk.func):
            raise SpecError(f"{where}: not a function")

    def validate(self):
        """Checks cross-references: parents exist, a timed check has a performance child and
        dependencies have no cycle.

        Raises SpecError on the first problem found.
        """
        for chk in self.checks:
            if chk.parent is not None and chk.parent not in self._by_id:
                raise SpecError(f"lab {self.name}: check {chk.id!r} has unknown parent "
                                f"{chk.parent!r}")
            if chk.timed and not any(c.parent == chk.id and c.is_performance
                                     for c in self.checks):
                raise SpecError(f"lab {self.name}: check {chk.id!r} is timed but no "
                                f"performance check scores it")
        state = {}
        for chk in self.checks:
            self._visit(chk, state, [])

    def dependencies(self, chk):
        """Returns the checks that must run before chk: its parent and, for a performance
        check, every correctness check of the same backend."""
        deps = []
        if chk.parent is not None:
            deps.append(self._by_id[chk.parent])
        if chk.is_performance:
            deps += [c for c in self.checks
                     if c.kind == "correctness" and c.backend == chk.backend and c not in deps]
        return deps

    def _visit(self, chk, state, path):
        if state.get(chk.id) == "done":
            return
        if state.get(chk.id) == "active":
            cycle = " -> ".join([c.id for c in path] + [chk.id])
            raise SpecError(f"lab {self.name}: dependency cycle: {cycle}")
        state[chk.id] = "active"
        for dep in self.dependencies(chk):
            self._visit(dep, state, path + [chk])
        state[chk.id] = "done"


def labs_dir(root):
    """Returns the folder holding lab specs under the repository root."""
    return os.path.join(root, "grader", "labs")


def available_labs(root):
    """Returns the sorted names of lab specs found under root (grader/labs/*.py)."""
    d = labs_dir(root)
    if not os.path.isdir(d):
        return []
    return sorted(f[:-3] for f in os.listdir(d)
                  if f.endswith(".py") and not f.startswith("_"))


def load_lab(root, name):
    """Imports grader/labs/<name>.py and returns its Lab (the module's `lab` variable, or
    its only Lab instance). Raises LookupError for an unknown lab, SpecError for a bad spec."""
    if not re.match(r"^[A-Za-z0-9_]+$", name or ""):
        raise LookupError(name)
    path = os.path.join(labs_dir(root), name + ".py")
    if not os.path.isfile(path):
        raise LookupError(name)
    modspec = importlib.util.spec_from_file_location(f"commlab_labs.{name}", path)
    module = importlib.util.module_from_spec(modspec)
    try:
        modspec.loader.exec_module(module)
    except SpecError as e:
        if str(e).startswith(path):
            raise
        raise SpecError(f"{path}:{_spec_line(e, path)}: {e}") from None
    except SyntaxError as e:
        raise SpecError(f"{path}:{e.lineno or 1}: syntax error: {e.msg}") from None
    except Exception as e:      # the spec's own code failed while being imported
        raise SpecError(f"{path}:{_spec_line(e, path)}: {type(e).__name__}: {e}") from None
    lab = getattr(module, "lab", None)
    if not isinstance(lab, Lab):
        found = [v for v in vars(module).values() if isinstance(v, Lab)]
        if len(found) != 1:
            raise SpecError(f"{path}: define exactly one Lab, named `lab`")
        lab = found[0]
    lab.validate()
    return lab


def _spec_line(exc, path):
    """The line of path where exc was raised (the innermost frame in that file), or 1."""
    line = 1
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
