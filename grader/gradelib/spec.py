"""Lab specs: the Lab object, its registry of checks, validation and loading by name."""

import importlib.util
import os
import re

BACKENDS = ("cpu", "sim", "gpu", "nic", "net", "cluster")
KINDS = ("correctness", "performance")
NEED_KEYS = ("gpus", "nics", "cpus", "ranks", "nodes", "commands")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SpecError(Exception):
    """A lab spec is malformed (duplicate id, unknown parent, bad field ...)."""


class Check:
    """One graded check: metadata plus the function that runs it."""

    def __init__(self, lab, id, title, func, points=0, backend="cpu", timeout=60,
                 parent=None, needs=None, kind="correctness"):
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

    @property
    def is_performance(self):
        return self.kind == "performance"

    def __repr__(self):
        return f"Check({self.id!r})"


class Lab:
    """A lab's spec: name, title, binary name and its ordered checks.

    Use the check() decorator to register checks; ids must be unique within the lab.
    """

    def __init__(self, name, title="", program=None):
        self.name = name
        self.title = title
        self.program = program if program is not None else name
        self.checks = []
        self._by_id = {}

    def check(self, id, title, points=0, backend="cpu", timeout=60, parent=None,
              needs=None, kind="correctness"):
        """Decorator registering func(ctx) (or func(ctx, parent_value)) as a check.

        Raises SpecError at once for a duplicate id or an invalid field.
        """
        def register(func):
            chk = Check(self, id, title, func, points, backend, timeout, parent, needs, kind)
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
        if not isinstance(chk.timeout, (int, float)) or chk.timeout <= 0:
            raise SpecError(f"{where}: timeout must be > 0 seconds")
        for key in chk.needs:
            if key not in NEED_KEYS:
                raise SpecError(f"{where}: unknown need {key!r} (one of {NEED_KEYS})")
        if not callable(chk.func):
            raise SpecError(f"{where}: not a function")

    def validate(self):
        """Checks cross-references: parents exist and dependencies have no cycle.

        Raises SpecError on the first problem found.
        """
        for chk in self.checks:
            if chk.parent is not None and chk.parent not in self._by_id:
                raise SpecError(f"lab {self.name}: check {chk.id!r} has unknown parent "
                                f"{chk.parent!r}")
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
    modspec.loader.exec_module(module)
    lab = getattr(module, "lab", None)
    if not isinstance(lab, Lab):
        found = [v for v in vars(module).values() if isinstance(v, Lab)]
        if len(found) != 1:
            raise SpecError(f"{path}: define exactly one Lab, named `lab`")
        lab = found[0]
    lab.validate()
    return lab
