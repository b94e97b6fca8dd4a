"""Which library functions a student's object file calls (nm -u), and forbidding some."""

import os

from .integrity import student_object_for
from .verdicts import CheckFailed


def student_object(ctx):
    """Returns the path of the compiled student file behind ctx.program."""
    return student_object_for(ctx.program)


def undefined_symbols(ctx):
    """Returns the set of symbols the student's object file needs from elsewhere."""
    obj = student_object(ctx)
    if not os.path.isfile(obj):
        raise CheckFailed("the compiled student file is missing", expected=obj, found="no file")
    res = ctx.run(["nm", "-u", obj])
    return {line.split()[-1] for line in res.stdout.splitlines() if line.strip()}


def forbid_symbols(ctx, names, why="", runtime=True):
    """Fails the check when the student's object calls any of names directly. With runtime
    (the default), the lab's program is also told to refuse them at run time
    (common/guard.c: calls through a pointer or a symbol lookup) in every later check of
    this run; use runtime=False for a function the lab's own driver calls."""
    if runtime and getattr(ctx, "forbidden", None) is not None:
        ctx.forbidden.update(names)
    used = sorted(set(names) & undefined_symbols(ctx))
    if used:
        raise CheckFailed("your code calls a function this lab asks you to write yourself",
                          expected="no call to " + ", ".join(names) + (f" ({why})" if why else ""),
                          found="calls " + ", ".join(used))
