"""The per-check wall-clock limit: a deadline plus a SIGALRM backstop for spec code."""

import contextlib
import signal
import threading
import time

from .verdicts import CheckTimeout


class CheckTimer:
    """Holds the running check's deadline.

    Commands read remaining() and stop themselves at the deadline. If Python code in the
    spec overruns, SIGALRM raises CheckTimeout a little after the deadline, but never inside
    a critical() section (process start and clean-up); there it is raised on exit.
    """

    GRACE = 0.5

    def __init__(self):
        self.deadline = None
        self.limit = None
        self._depth = 0
        self._pending = False
        self._armed = False

    def arm(self, limit):
        """Starts a limit of `limit` seconds from now."""
        self.limit = limit
        self.deadline = time.monotonic() + limit
        self._pending = False
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, limit + self.GRACE)
            self._armed = True

    def disarm(self):
        """Stops the limit (no alarm can fire afterwards)."""
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._armed = False
        self.deadline = None
        self._pending = False

    def remaining(self):
        """Returns seconds left before the deadline (inf when no limit is armed)."""
        if self.deadline is None:
            return float("inf")
        return self.deadline - time.monotonic()

    def expired_error(self, doing=""):
        """Returns the CheckTimeout describing the check's overrun."""
        what = f" while {doing}" if doing else ""
        return CheckTimeout(f"time limit of {self.limit:g} s for this check reached{what}",
                            expected=f"finish within {self.limit:g} s",
                            found="still running at the limit")

    def _on_alarm(self, signum, frame):
        if self._depth > 0:
            self._pending = True
            return
        raise self.expired_error("running the check's own code")

    @contextlib.contextmanager
    def stopped(self):
        """Stops the clock while the body runs (a wait for the machine is not the check's
        time); the deadline moves on by as long as the body took."""
        if self.deadline is None:
            yield
            return
        left, limit = self.remaining(), self.limit
        self.disarm()
        try:
            yield
        finally:
            self.arm(max(left, 0.0))
            self.limit = limit

    @contextlib.contextmanager
    def critical(self):
        """Defers the alarm while the body runs (used around process start and clean-up)."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if self._depth == 0 and self._pending:
            self._pending = False
            raise self.expired_error("running the check's own code")


TIMER = CheckTimer()
