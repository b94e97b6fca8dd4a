"""A machine-wide admission limit: graders beyond what the machine can run fairly wait their turn.

On a shared login node twenty students grade at once on a few cores. A check that runs MPI
ranks busy-polls its cores; two such checks on two cores halve each other and time out, and
a performance check measured beside another is meaningless. So every check asks for CPU
units before it starts: a performance check, and a timed check (one whose measurements a
performance check scores), asks for the whole machine, a check of MPI or GPU ranks for two
units, anything else for one; a CPU correctness check starts with one and asks for the second
when it starts MPI ranks. Checks enter in the order they asked (first come, first served);
the time a check spends queued is not part of its time limit.

The state is one small file, changed under an exclusive lock, in a folder every user can
write (COMMLAB_ADMISSION_DIR, default /tmp/commlab-admission). Holders whose process is
gone are dropped, so a grader killed with SIGKILL blocks nobody. COMMLAB_ADMISSION_CPUS
sets the machine's capacity (default: the CPUs this process may use); 0 turns the limit off.
"""

import fcntl
import json
import os
import time

POLL = 0.2


def capacity():
    """CPU units the machine offers graders (0: no limit)."""
    raw = os.environ.get("COMMLAB_ADMISSION_CPUS")
    if raw is not None:
        try:
            return max(0, int(raw))
        except ValueError:
            pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def units_for(check):
    """The CPU units a check asks for first, and whether it needs the machine alone."""
    # Virtual time does not care what else runs: a simulated measurement needs no machine.
    if (check.kind == "performance" or check.timed) and check.backend != "sim":
        return capacity(), True
    # A CPU correctness check that parses or computes runs one process at a time; it asks
    # for the second unit when it starts MPI ranks (Ticket.grow, from ctx.mpirun). Decisions
    # and questions may time what they run, so they keep their two units throughout.
    if check.kind == "correctness" and check.backend == "cpu":
        return 1, False
    return (2 if check.backend in ("cpu", "gpu", "net", "cluster") else 1), False


MPI_UNITS = 2     # what a check holds while its MPI ranks busy-poll


def _folder():
    d = os.environ.get("COMMLAB_ADMISSION_DIR", "/tmp/commlab-admission")
    try:
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o1777)
    except OSError:
        pass
    return d


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


class Ticket:
    """A place in the queue, then a share of the machine; release() gives it back."""

    def __init__(self, units, exclusive, label=""):
        self.cap = capacity()
        self.units = min(units, self.cap) if self.cap else 0
        self.exclusive = exclusive
        self.label = label
        self.id = f"{os.getpid()}-{time.monotonic_ns()}"
        self.waited = 0.0
        self.held = False

    def _locked(self, change):
        d = _folder()
        lock_path, state_path = os.path.join(d, "lock"), os.path.join(d, "state")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            try:
                os.fchmod(fd, 0o666)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                with open(state_path, encoding="utf-8") as f:
                    state = json.load(f)
            except (OSError, ValueError):
                state = {"holders": [], "queue": []}
            state["holders"] = [h for h in state.get("holders", []) if _alive(h["pid"])]
            state["queue"] = [q for q in state.get("queue", []) if _alive(q["pid"])]
            result = change(state)
            tmp = f"{state_path}.{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(state, f)
            os.chmod(tmp, 0o666)
            os.replace(tmp, state_path)
            return result
        finally:
            os.close(fd)

    def acquire(self, on_wait=None):
        """Waits until the check may run; calls on_wait(position) once if it must queue.
        Returns the seconds spent waiting."""
        if not self.cap:
            return 0.0
        me = {"id": self.id, "pid": os.getpid(), "units": self.units,
              "exclusive": self.exclusive, "label": self.label}

        def join(state):
            state["queue"].append(me)

        def try_enter(state):
            ids = [q["id"] for q in state["queue"]]
            if self.id not in ids:
                state["queue"].append(me)
                ids.append(self.id)
            if ids[0] != self.id:
                return ids.index(self.id)
            used = sum(h["units"] for h in state["holders"])
            busy_alone = any(h["exclusive"] for h in state["holders"])
            fits = not busy_alone and (not state["holders"] if self.exclusive
                                       else used + self.units <= self.cap)
            if not fits:
                return 0
            state["queue"].pop(0)
            state["holders"].append(me)
            return -1

        t0 = time.monotonic()
        self._locked(join)
        told = False
        while True:
            pos = self._locked(try_enter)
            if pos < 0:
                break
            if not told and on_wait:
                on_wait(pos)
                told = True
            time.sleep(POLL)
        self.held = True
        self.waited = time.monotonic() - t0
        return self.waited

    def grow(self, units, on_wait=None):
        """Makes the share at least `units`: gives the smaller share back and queues again
        at the end (never holding one share while waiting for another, so two growing
        checks cannot block each other). Returns the seconds spent waiting."""
        want = min(units, self.cap) if self.cap else 0
        if not self.held or want <= self.units:
            return 0.0
        self.release()
        self.units = want
        self.id = f"{os.getpid()}-{time.monotonic_ns()}"
        return self.acquire(on_wait)

    def release(self):
        if not self.held and not self.cap:
            return

        def leave(state):
            state["holders"] = [h for h in state["holders"] if h["id"] != self.id]
            state["queue"] = [q for q in state["queue"] if q["id"] != self.id]

        try:
            self._locked(leave)
        except OSError:
            pass
        self.held = False
