"""The answers file of a lab's 思考 questions: labs/<lab>/answers.txt, one `key = value` per
line, `#` starts a comment. The student fills it in with numbers or choices from their own
runs; a check of kind "question" reads it with read() and compares with what the grader
finds itself. With --solution the reference's file (solutions/<lab>/answers.txt) is read."""

import math
import os

from .verdicts import CheckFailed

MAX_BYTES = 1 << 16


def path(ctx):
    """The answers file graded in this run."""
    folder = "solutions" if ctx.solution else "labs"
    return os.path.join(ctx.root, folder, ctx.lab, "answers.txt")


def read(ctx):
    """Returns {key: value text} of the answers file; CheckFailed with the line for a line
    that is not `key = value`, or when the file cannot be read."""
    rel = f"labs/{ctx.lab}/answers.txt"
    try:
        with open(path(ctx), encoding="utf-8", errors="replace") as f:
            text = f.read(MAX_BYTES)
    except OSError as e:
        raise CheckFailed(f"cannot read {rel}", expected="the answers file",
                          found=e.strerror) from None
    out = {}
    for i, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise CheckFailed(f"{rel} line {i}: not `key = value`", expected="key = value",
                              found=line[:80])
        out[key.strip()] = value.strip()
    return out


def number(answers, key):
    """The answer `key` as a finite number; CheckFailed naming the key otherwise."""
    text = answers.get(key, "")
    try:
        v = float(text)
    except ValueError:
        raise CheckFailed(f"answers.txt: {key} is not a number", expected="a number",
                          found=repr(text[:40]) if text else "no answer") from None
    if not math.isfinite(v):
        raise CheckFailed(f"answers.txt: {key} is not a finite number", expected="a number",
                          found=text[:40])
    return v
