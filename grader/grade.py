#!/usr/bin/python3
"""Entry point of ./grade: puts gradelib on the path and runs its command line."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True      # leave no __pycache__ in the student's tree

from gradelib.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(default_root=os.path.dirname(HERE)))
