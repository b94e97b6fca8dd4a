"""What the held-back tests share: the list of held-back material (.release-exclude), a
student release built from this tree, and the checks that it ships none of that material,
by name or by content, and does ship what grading a lab needs."""

import glob
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def excluded():
    with open(os.path.join(ROOT, ".release-exclude"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def release(test, prefix):
    """The student release of this tree, built into a fresh folder (removed after the test)."""
    if shutil.which("git") is None:
        test.skipTest("needs git")
    tmp = tempfile.mkdtemp(prefix=prefix)
    test.addCleanup(shutil.rmtree, tmp, True)
    out = os.path.join(tmp, "release")
    r = subprocess.run([os.path.join(ROOT, "scripts", "student_release.sh"), out], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
    return out


def assert_content_not_shipped(test, out, pattern):
    """No file of the release has the content of a held-back file (ROOT/pattern)."""
    hidden = set()
    for f in glob.glob(os.path.join(ROOT, pattern)):
        with open(f, "rb") as fh:
            hidden.add(fh.read())
    for dirpath, _, files in os.walk(out):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                test.assertNotIn(fh.read(), hidden, os.path.join(dirpath, name))


def assert_shipped(test, out, paths):
    for must in paths:
        test.assertTrue(os.path.exists(os.path.join(out, must)), must)
