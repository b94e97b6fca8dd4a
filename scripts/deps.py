#!/usr/bin/python3
"""deps.py: install the Debian packages the course and its tests need (as root), or say which.

  scripts/deps.py          what students need (the list `./grade` also uses)
  scripts/deps.py --tests  that and what the project's own tests need (`make test`)

The lists live in grader/gradelib/deps.py.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))
from gradelib import deps  # noqa: E402

packages = deps.PACKAGES + (deps.TEST_PACKAGES if "--tests" in sys.argv[1:] else [])
try:
    deps.ensure(packages=packages)
except deps.DepsError as e:
    print(f"deps: {e}", file=sys.stderr)
    sys.exit(2)
