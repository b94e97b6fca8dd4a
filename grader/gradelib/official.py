"""Official grading: a fresh copy of the pristine course tree with only the student's
source files taken from their copy (./grade LAB --official STUDENT_DIR)."""

import os
import shutil
import stat
import subprocess
import tempfile

MAX_STUDENT_FILE = 1 << 20
_SKIP = {"build", "build-san", "__pycache__", ".git"}


class OfficialError(Exception):
    """The student's copy cannot be graded (a file is missing, a link, or too large)."""


def course_files(root):
    """Relative paths of the course tree: git's tracked and untracked-but-not-ignored files
    when root is a git work tree, else every file outside build folders."""
    try:
        r = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, timeout=60)
        if r.returncode == 0 and r.stdout:
            return [p for p in r.stdout.decode().split("\0") if p]
    except (OSError, subprocess.TimeoutExpired):
        pass
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP]
        out += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
    return out


def _closed_ancestor(path):
    """The first folder above path that other users may not traverse, or None."""
    path = os.path.dirname(os.path.abspath(path))
    while True:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return path
        if path == os.path.dirname(path):
            return None
        path = os.path.dirname(path)


def prepare(root, lab, student_dir):
    """Returns a new temporary tree: the course files of root, then lab.student_files read
    from student_dir (regular files only, each at most 1 MiB). The caller removes it."""
    student_dir = os.path.abspath(student_dir)
    tmp = tempfile.mkdtemp(prefix=f"commlab-official-{lab.name}-")
    tree = os.path.join(tmp, "course")
    try:
        if os.geteuid() == 0:
            # the student's commands run as another user, who must reach the tree
            os.chmod(tmp, 0o711)
            closed = _closed_ancestor(tmp)
            if closed:
                raise OfficialError(f"official grading runs the student's code as another "
                                    f"user, who cannot enter {closed} (mode "
                                    f"{os.stat(closed).st_mode & 0o777:o}): set TMPDIR to a "
                                    f"folder others may traverse")
        for rel in course_files(root):
            src = os.path.join(root, rel)
            if not os.path.isfile(src) or os.path.islink(src):
                continue
            dst = os.path.join(tree, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
        for rel in lab.student_files:
            src = os.path.join(student_dir, rel)
            if os.path.islink(src):
                raise OfficialError(f"{rel} in {student_dir} is a symbolic link")
            if not os.path.isfile(src):
                raise OfficialError(f"{rel} not found in {student_dir}")
            if os.path.getsize(src) > MAX_STUDENT_FILE:
                raise OfficialError(f"{rel} is larger than {MAX_STUDENT_FILE >> 10} KiB")
            with open(src, "rb") as f:
                data = f.read(MAX_STUDENT_FILE + 1)
            dst = os.path.join(tree, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, tree
