"""Typical wrong answers, as small edits of each reference solution, and the checks
that must catch them: tests/labs/mutants/labNN.py defines MUTANTS for labNN.
tests/labs/test_labs.py grades every mutant."""

import importlib
import os
from collections import namedtuple

# name: what the mistake is; old/new: the edit (old must occur `count` times in the
# solution file); caught_by: checks that must not get full points.
Mutant = namedtuple("Mutant", "name old new caught_by count", defaults=(1,))


def all_mutants():
    """Returns {lab: [Mutant, ...]} for every labNN.py in this folder."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = {}
    for name in sorted(os.listdir(here)):
        if name.startswith("lab") and name.endswith(".py"):
            lab = name[:-3]
            found[lab] = importlib.import_module(f"tests.labs.mutants.{lab}").MUTANTS
    return found
