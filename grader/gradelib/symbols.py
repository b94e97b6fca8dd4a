"""Which library functions a student's object file calls (nm -u), and forbidding some."""

import os

from .verdicts import CheckFailed


def student_object(ctx):
    """Returns the path of the compiled student file behind ctx.program.

    The layout is mk/labs.mk's: build/labs/L/L -> build/obj/labs/L/L.o,
    build/solutions/L/L -> build/obj/solutions/L/L.o, OUT/L (--source) -> OUT/L.o.
    """
    program = os.path.abspath(ctx.program)
    lab_dir = os.path.dirname(program)
    kind_dir = os.path.dirname(lab_dir)
    build = os.path.dirname(kind_dir)
    name = os.path.basename(program)
    if os.path.basename(kind_dir) in ("labs", "solutions"):
        return os.path.join(build, "obj", os.path.basename(kind_dir), name, name + ".o")
    return program + ".o"


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
