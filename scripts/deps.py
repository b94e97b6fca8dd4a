#!/usr/bin/python3
"""deps.py: install the Debian packages the course needs (as root), or say which.

The list lives in grader/gradelib/deps.py, the one place `./grade` also uses.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))
from gradelib import deps  # noqa: E402

try:
    deps.ensure()
except deps.DepsError as e:
    print(f"deps: {e}", file=sys.stderr)
    sys.exit(2)
