"""A lab's answers file: `key = value` lines for the handout's 思考 questions that have a
checkable answer (labs/<lab>/answers.txt; with --solution the reference's,
solutions/<lab>/answers.txt). The student fills it with numbers or choices from their own
runs; a check of kind "question" compares them with what the grader finds itself: all or
nothing by default, or a share per right answer with score_answers()."""

import math
import os

from .verdicts import CheckFailed

MAX_BYTES = 1 << 16


def answers_path(ctx, name="answers.txt"):
    """The answers file this run grades: the reference's with --solution, else the lab's."""
    folder = "solutions" if ctx.solution else "labs"
    return os.path.join(ctx.root, folder, ctx.lab, name)


def read_answers(ctx, name="answers.txt"):
    """{key: value} of the answers file ('#' comments and blank lines skipped). Raises
    CheckFailed, with the line, for a missing file or a line that is not `key = value`."""
    path = answers_path(ctx, name)
    rel = os.path.relpath(path, ctx.root)
    if not os.path.isfile(path):
        raise CheckFailed(f"{rel} is missing", expected="your answers file", found="no file")
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f.read(MAX_BYTES).splitlines(), 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            key, eq, value = text.partition("=")
            if not eq or not key.strip():
                raise CheckFailed(f"{rel}:{number}: not `key = value`", expected="key = value",
                                  found=line.strip())
            out[key.strip()] = value.strip()
    return out


def answer(answers, key, rel="answers.txt"):
    """The non-empty answer to key; CheckFailed naming the key when it is missing or empty."""
    value = answers.get(key, "")
    if not value:
        raise CheckFailed(f"no answer to {key} in {rel}", expected=f"{key} = <your answer>",
                          found="empty")
    return value


def answer_number(answers, key, rel="answers.txt"):
    """The answer to key as a number; CheckFailed when it is not one."""
    value = answer(answers, key, rel)
    try:
        v = float(value.replace("_", ""))
    except ValueError:
        raise CheckFailed(f"{key} in {rel} is not a number", expected="a number such as 135000",
                          found=value) from None
    if not math.isfinite(v):
        raise CheckFailed(f"{key} in {rel} is not a finite number", expected="a number",
                          found=value)
    return v


def score_answers(ctx, results):
    """Scores a question check's answers as a share of its points: results is a list of
    (key, ok, expected, found); each right answer is an equal share."""
    if not results:
        raise CheckFailed("no questions to grade", expected="answers", found="none")
    right = sum(1 for _, ok, _, _ in results if ok)
    ctx.perf_fractions.append(round(right / len(results), 4))
    lines = [f"{right}/{len(results)} answers right"]
    for key, ok, expected, found in results:
        lines.append(f"  {key}: {'right' if ok else 'wrong'} (expected {expected}, found {found})")
        ctx.log(lines[-1])
    ctx.perf_messages.append("; ".join(lines))
    ctx.metric("answers_right", right)


def check_answer(ans, key, test, expected, number=False):
    """(key, ok, expected, found) for score_answers: test(value) says whether the answer is
    right; a missing or malformed answer is wrong, never an error."""
    try:
        value = answer_number(ans, key) if number else answer(ans, key)
    except CheckFailed as e:
        return key, False, expected, e.found or "nothing"
    return key, bool(test(value)), expected, value
