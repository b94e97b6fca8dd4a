"""Limits for the commands a check runs: rlimits, a scrubbed environment, private
temporary directories, and finding every process a command started (even one that left
its process group or session)."""

import ctypes
import os
import re
import resource
import secrets
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass

DEFAULT_MEM_MB = 8192          # address space per process (RLIMIT_AS); 0: no limit
DEFAULT_MAX_PROCS = 256        # processes one command may have at the same time
DEFAULT_FSIZE = 256 << 20      # largest file a command may write (RLIMIT_FSIZE)
MEM_ENV = "COMMLAB_GRADE_MEM_MB"
KEEP_ENV = "COMMLAB_GRADE_KEEP_ENV"     # extra variables to pass (comma list; not official)

# What a command sees of the grader's environment: these names, and names with these
# prefixes (MPI, NCCL, CUDA, Slurm and hwloc settings the machine's owner chose).
_KEEP_NAMES = {"PATH", "LD_LIBRARY_PATH", "USER", "LOGNAME", "TZ", "CUDA_VISIBLE_DEVICES",
               "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "COMMLAB_DATASETS", "ASAN_OPTIONS",
               "UBSAN_OPTIONS", "LSAN_OPTIONS", "COMMLAB_SANITIZE"}
_KEEP_PREFIXES = ("OMPI_", "PMIX_", "PRTE_", "NCCL_", "UCX_", "SLURM_", "HWLOC_", "CUDA_",
                  "COMMLAB_SIM_")
# Never passed on, whatever the prefix rules say.
_DROP = {"LD_PRELOAD", "LD_AUDIT", "LD_DEBUG", "LD_PROFILE", "MALLOC_CHECK_"}

PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Limits:
    """What one command may use. mem_mb and max_procs of 0 mean no limit."""

    mem_mb: int = DEFAULT_MEM_MB
    fsize: int = DEFAULT_FSIZE
    max_procs: int = DEFAULT_MAX_PROCS
    scrub_env: bool = True
    private_tmp: bool = True
    official: bool = False         # official grading: no COMMLAB_GRADE_KEEP_ENV pass-through
    jail_root: str = None          # run in a mount namespace with this tree read-only
    jail_hide: tuple = ()          # folders replaced by empty ones inside the jail
    jail_writable: tuple = ()      # folders that stay writable (besides the work folder)
    run_as: int = None             # a uid to run as (official grading as root: nobody)


def default_limits():
    """Returns the Limits for a check's commands, honouring COMMLAB_GRADE_MEM_MB."""
    lim = Limits()
    if os.environ.get("COMMLAB_GRADE_SAN") == "1":
        lim.mem_mb = 0              # ASan reserves terabytes of address space
    raw = os.environ.get(MEM_ENV)
    if raw is not None:
        try:
            lim.mem_mb = max(0, int(raw))
        except ValueError:
            pass
    return lim


NOBODY = 65534


def build_limits(root, solution=False, official=False, writable=()):
    """Limits of the build: no memory or process cap, the grader's environment, but jailed
    like the checks (the student's source is compiled without a view of the reference, the
    grader or other processes), writing only the build folders."""
    lim = Limits(mem_mb=0, fsize=1 << 30, max_procs=0, scrub_env=False, official=official)
    lim.jail_root = root
    lim.jail_hide = tuple(hidden_dirs(root, solution))
    lim.jail_writable = tuple(writable)
    lim.run_as = unprivileged_uid(official)
    return lim


def unprivileged_uid(official):
    """The uid official grading runs the student's commands as: nobody when the grader is
    root, None (the grader's own) otherwise."""
    return NOBODY if official and os.geteuid() == 0 else None


def clean_env(base, extra_keep=()):
    """Returns the part of environment base that a student's command may see."""
    keep = set(_KEEP_NAMES) | set(extra_keep)
    return {k: v for k, v in base.items()
            if k not in _DROP and (k in keep or k.startswith(_KEEP_PREFIXES))}


def extra_keep_names(official=False):
    """Names listed in COMMLAB_GRADE_KEEP_ENV (ignored in official mode)."""
    if official:
        return ()
    return tuple(n.strip() for n in os.environ.get(KEEP_ENV, "").split(",") if n.strip())


def preexec(limits, switch_user=True):
    """Returns a function for Popen(preexec_fn=...) applying limits in the child (and the
    change of user, when no jail does it)."""
    nproc = None
    if limits.max_procs and os.getuid() != 0:
        # RLIMIT_NPROC counts every process of the user; root is exempt from it (the
        # runner's own count of the command's processes covers root).
        nproc = _user_process_count() + limits.max_procs

    def apply():
        _setlimit(resource.RLIMIT_CORE, 0)
        if limits.mem_mb:
            _setlimit(resource.RLIMIT_AS, limits.mem_mb << 20)
        if limits.fsize:
            _setlimit(resource.RLIMIT_FSIZE, limits.fsize)
        if nproc:
            _setlimit(resource.RLIMIT_NPROC, nproc)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        if switch_user and limits.run_as is not None:
            os.setgroups([])
            os.setgid(limits.run_as)
            os.setuid(limits.run_as)
    return apply


def give(uid, *paths):
    """Makes paths (folders, recursively) belong to uid, so that a command run as that user
    can write its own work folders. Never fails."""
    for top in paths:
        if not top or not os.path.exists(top):
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            for name in [dirpath] + [os.path.join(dirpath, f) for f in filenames]:
                try:
                    os.lchown(name, uid, uid)
                except OSError:
                    pass


def _setlimit(which, value):
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    try:
        resource.setrlimit(which, (value, hard))
    except (ValueError, OSError):
        pass


def _user_process_count():
    uid = os.getuid()
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


# ---- private temporary directories ---------------------------------------------------

_RUN_DIR = None


def run_dir():
    """The grader run's own temporary directory (created once, removed at exit)."""
    global _RUN_DIR
    if _RUN_DIR is None or not os.path.isdir(_RUN_DIR):
        _RUN_DIR = tempfile.mkdtemp(prefix="commlab-grade-")
        os.chmod(_RUN_DIR, 0o711)   # another user may use a folder inside it, not list it
        import atexit
        atexit.register(shutil.rmtree, _RUN_DIR, True)
    return _RUN_DIR


_SWEPT = False


def sweep_stale_shm_dirs():
    """Removes /dev/shm/commlab-PID-* folders of graders that no longer run (a grader
    killed with SIGKILL cannot remove its own). Called once per grader process."""
    global _SWEPT
    if _SWEPT:
        return
    _SWEPT = True
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return
    for name in names:
        m = re.fullmatch(r"commlab-(\d+)-[0-9a-f]+", name)
        if not m or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join("/dev/shm", name), ignore_errors=True)
        except OSError:
            pass    # alive, owned by someone else


class PrivateDirs:
    """A command's own TMPDIR (and HOME), and its own folder in /dev/shm for MPI's shared
    memory segments; both are removed when the command ends."""

    def __init__(self):
        sweep_stale_shm_dirs()
        self.tmp = tempfile.mkdtemp(prefix="cmd-", dir=run_dir())
        self.shm = None
        if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
            path = f"/dev/shm/commlab-{os.getpid()}-{secrets.token_hex(6)}"
            try:
                os.mkdir(path, 0o700)
                self.shm = path
            except OSError:
                self.shm = None

    def env(self):
        """Variables pointing the command (and Open MPI) at the private directories."""
        shm = self.shm or self.tmp
        return {
            "TMPDIR": self.tmp, "TMP": self.tmp, "TEMP": self.tmp, "HOME": self.tmp,
            # Open MPI 4 (orte, vader) and 5 (prte, sm): session dirs and segments
            "OMPI_MCA_orte_tmpdir_base": self.tmp, "OMPI_MCA_prte_tmpdir_base": self.tmp,
            "PRTE_MCA_prte_tmpdir_base": self.tmp,
            "OMPI_MCA_btl_vader_backing_directory": shm,
            "OMPI_MCA_btl_sm_backing_directory": shm,
        }

    def paths(self):
        """The private folders (for handing them to another user)."""
        return tuple(d for d in (self.tmp, self.shm) if d)

    def remove(self):
        for d in (self.tmp, self.shm):
            if d:
                shutil.rmtree(d, ignore_errors=True)


# ---- processes -----------------------------------------------------------------------

_SUBREAPER = None


def become_subreaper():
    """Makes this process the subreaper of its descendants, so that a process that
    double-forks or calls setsid() is still found (as our child). True on success."""
    global _SUBREAPER
    if _SUBREAPER is None:
        _SUBREAPER = False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            pass
    return _SUBREAPER


_STAT = re.compile(rb"^\d+ \(.*\) (\S) (-?\d+) (-?\d+) (-?\d+) ", re.S)


def process_table():
    """Returns {pid: (state, ppid, pgid, sid)} for every process visible in /proc."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                m = _STAT.match(f.read())
        except OSError:
            continue
        if m:
            table[int(name)] = (m.group(1).decode(), int(m.group(2)), int(m.group(3)),
                                int(m.group(4)))
    return table


def descendants(table, roots):
    """Returns the pids of roots and of all their descendants in table."""
    children = {}
    for pid, (_, ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = set(), [r for r in roots if r in table]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out.add(pid)
        todo.extend(children.get(pid, ()))
    return out


def command_processes(table, pid, orphans_of=None, exclude=()):
    """Returns the live (non-zombie) processes of the command started as pid: its
    descendants, its process group and session, and (with orphans_of = our pid) the
    orphans re-parented to us that are not in exclude (other commands still running)."""
    found = descendants(table, [pid])
    found |= {p for p, (_, _, pgid, sid) in table.items() if pgid == pid or sid == pid}
    if orphans_of is not None:
        strays = [p for p, (_, ppid, _, _) in table.items()
                  if ppid == orphans_of and p not in exclude]
        found |= descendants(table, strays)
    me = os.getpid()
    return {p for p in found if p != me and table.get(p, ("Z",))[0] != "Z"}


def sweep(pid, exclude=(), rounds=50):
    """SIGKILLs every process of the command started as pid (see command_processes) until
    none is left, then reaps the orphans re-parented to us. Returns how many were killed."""
    me = os.getpid()
    killed = set()
    for _ in range(rounds):
        table = process_table()
        victims = command_processes(table, pid, orphans_of=me, exclude=exclude) - {pid}
        victims.discard(pid)
        if not victims:
            break
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
                killed.add(p)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
    reap_orphans(exclude | {pid})
    return len(killed)


def reap_orphans(exclude):
    """Collects the exit status of our children that no Popen owns (re-parented orphans)."""
    table = process_table()
    me = os.getpid()
    for p, (_, ppid, _, _) in table.items():
        if ppid == me and p not in exclude:
            try:
                os.waitpid(p, os.WNOHANG)
            except ChildProcessError:
                pass


# ---- the jail: a private mount namespace ------------------------------------------------

_JAIL_SCRIPT = r"""
set -e
root=$1; uid=$2; shift 2
mount --make-rprivate / 2>/dev/null || true
while [ "$1" != "--hide" ]; do mount --bind "$1" "$1"; shift; done
shift
mount --rbind "$root" "$root"
mount -o remount,bind,ro "$root"
while [ "$1" != "--" ]; do
    [ -d "$1" ] && mount -t tmpfs -o size=4k,mode=0555 commlab-hidden "$1"
    shift
done
shift
cd "$(pwd -P)"     # the working directory again, now through the new mounts
set +e
# This shell is process 1 of the namespace: the command runs as its child (a process 1
# ignores signals it sends itself), and when the shell exits every process left dies.
if [ "$uid" != "-" ]; then
    setpriv --reuid="$uid" --regid="$uid" --clear-groups --no-new-privs -- "$@"
else
    "$@"
fi
exit $?
"""

_JAIL_OK = None


def jail_available():
    """True when commands can run in a private mount namespace (unshare works here)."""
    global _JAIL_OK
    if _JAIL_OK is None:
        import subprocess
        _JAIL_OK = False
        if shutil.which("unshare") and shutil.which("mount"):
            # try the real thing on a scratch tree: unshare may work where mount does not
            probe = tempfile.mkdtemp(prefix="jail-probe-", dir=run_dir())
            for d in ("work", "hide"):
                os.mkdir(os.path.join(probe, d))
            try:
                r = subprocess.run(jail_argv(["true"], probe, os.path.join(probe, "work"),
                                             [os.path.join(probe, "hide")]),
                                   capture_output=True, timeout=10, cwd=probe)
                _JAIL_OK = r.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                pass
            finally:
                shutil.rmtree(probe, ignore_errors=True)
    return _JAIL_OK


def _unshare_prefix():
    """unshare into new mount and PID namespaces: the command sees only its own processes
    (a fresh /proc), and when its first process ends, or the grader kills unshare, the
    kernel kills every process left in the namespace."""
    base = ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child",
            "--mount-proc"]
    return base if os.getuid() == 0 else base[:1] + ["--map-root-user"] + base[1:]


def hidden_dirs(root, solution=False):
    """The folders of root a student's program must not see: the reference solutions and
    their build, the grader, the repository history and every tests/**/expected folder."""
    names = [".git", "grader"]
    if not solution:
        names += ["solutions"]
        custom = os.environ.get("COMMLAB_GRADE_BUILD", "").strip().strip("/")
        for b in {"build", "build-san", custom} - {"", ".", ".."}:
            names += [f"{b}/solutions", f"{b}/obj/student-side/solutions"]
    dirs = [os.path.join(root, n) for n in names]
    tests = os.path.join(root, "tests")
    for dirpath, dirnames, _ in os.walk(tests):
        if dirpath.count(os.sep) - tests.count(os.sep) >= 3:
            dirnames[:] = []
        for d in dirnames:
            if d == "expected" or d.startswith("expected_"):
                dirs.append(os.path.join(dirpath, d))
    return [d for d in dirs if os.path.isdir(d)]


def jail_argv(argv, root, workdir, hide, writable=(), run_as=None):
    """Returns argv wrapped so that it runs in its own PID namespace with root read-only
    (but workdir and the writable folders writable), the folders in hide replaced by empty
    ones, and as user run_as when given. A command killed by signal N exits the jail with
    status 128 + N (runner.py reads it back as the signal)."""
    rw = [d for d in [workdir, *writable] if d and os.path.isdir(d)]
    return (_unshare_prefix() + ["/bin/sh", "-c", _JAIL_SCRIPT, "commlab-jail", root,
                                 "-" if run_as is None else str(run_as)]
            + rw + ["--hide"] + list(hide) + ["--"] + [str(a) for a in argv])
