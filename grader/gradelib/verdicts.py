"""Verdict names, the exceptions that produce them, and the per-check outcome record."""

from dataclasses import dataclass, field

PASS = "PASS"
FAIL = "FAIL"
TIMEOUT = "TIMEOUT"
CRASH = "CRASH"
SKIP = "SKIP"
BUILD_ERROR = "BUILD-ERROR"

VERDICTS = (PASS, FAIL, TIMEOUT, CRASH, SKIP, BUILD_ERROR)
FAILED_VERDICTS = (FAIL, TIMEOUT, CRASH, BUILD_ERROR)


class CheckFailed(Exception):
    """A check did not get the expected result.

    message: one line saying what went wrong; expected/found: the two sides (optional);
    command: the shell line that reproduces it (the harness fills in the last command run
    by the check when this is None); details: extra lines (e.g. the tail of stderr).
    """

    verdict = FAIL

    def __init__(self, message, expected=None, found=None, command=None, details=None):
        super().__init__(message)
        self.message = message
        self.expected = expected
        self.found = found
        self.command = command
        self.details = details

    def render(self):
        """Returns the multi-line failure text (without the reproduce line)."""
        lines = [self.message]
        if self.expected is not None:
            lines.append(f"expected: {self.expected}")
        if self.found is not None:
            lines.append(f"found:    {self.found}")
        if self.details:
            lines.append(self.details.rstrip("\n"))
        return "\n".join(lines)


class CheckTimeout(CheckFailed):
    """A command or the check as a whole ran past its time limit."""

    verdict = TIMEOUT


class CheckCrashed(CheckFailed):
    """A command was killed by a signal (or mpirun reported a rank that died on one)."""

    verdict = CRASH


class CheckSkipped(Exception):
    """The check cannot run here (missing hardware or backend); it is not scored."""

    verdict = SKIP

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Outcome:
    """What happened to one check: verdict, score and everything the report shows."""

    check: object                      # the spec.Check
    verdict: str = PASS
    score: float = 0.0
    message: str = ""                  # failure text / skip reason / perf summary
    command: str = None                # reproduce line
    elapsed: float = 0.0
    waited: float = 0.0          # seconds queued for the machine (admission.py)
    scored: bool = True                # False for dependencies run only for their value
    metrics: dict = field(default_factory=dict)
    plots: list = field(default_factory=list)
    log_path: str = None
    value: object = None               # the check function's return value (for children)
    commands: list = field(default_factory=list)    # repro lines of the commands it ran
    log_lines: list = field(default_factory=list)
    backend_missing: bool = False      # skipped because its backend is absent from the machine

    @property
    def max_score(self):
        return self.check.points

    @property
    def passed(self):
        return self.verdict == PASS

    @property
    def failed(self):
        return self.verdict in FAILED_VERDICTS

    @property
    def skipped(self):
        return self.verdict == SKIP
