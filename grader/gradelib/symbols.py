"""Which functions the student's object file calls (nm -u, versions stripped), and forbidding some."""

import os

from .integrity import student_object_for, undefined
from .verdicts import CheckFailed


def undefined_symbols(ctx):
    """Returns the set of (normalised) symbols the student's object file needs from elsewhere."""
    obj = student_object_for(ctx.program)
    names = undefined(obj) if os.path.isfile(obj) else None
    if names is None:
        raise CheckFailed("the compiled student file is missing", expected=obj, found="no file")
    return names


def forbid_symbols(ctx, names, why=""):
    """Fails the check when the student's object calls any of names directly (the student's
    program is linked without the library's own versions, so a call would not link; this
    says why in the lab's words)."""
    used = sorted(set(names) & undefined_symbols(ctx))
    if used:
        raise CheckFailed("your code calls a function this lab asks you to write yourself",
                          expected="no call to " + ", ".join(names) + (f" ({why})" if why else ""),
                          found="calls " + ", ".join(used))
