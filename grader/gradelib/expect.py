"""Assertions for lab specs: each raises CheckFailed saying what was expected and found."""

import math
import re

from .verdicts import CheckFailed


def _show(value):
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


def expect(what, found, expected=True):
    """Passes when found == expected; otherwise raises CheckFailed naming `what`.

    With one value, expect("all ranks agree", ok) checks that ok is True.
    """
    if found != expected:
        raise CheckFailed(f"{what}: wrong value", expected=_show(expected), found=_show(found))


def _number(what, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CheckFailed(f"{what}: not a number", expected="a number", found=_show(value))
    if math.isnan(value) or math.isinf(value):
        raise CheckFailed(f"{what}: not a finite number", expected="a finite number",
                          found=_show(value))
    return float(value)


def expect_close(what, found, expected, rel=None, abs=None):
    """Passes when |found - expected| <= max(rel*|expected|, abs).

    With neither tolerance given, rel defaults to 1e-6. NaN and infinities always fail.
    """
    f = _number(what, found)
    e = _number(f"{what} (reference)", expected)
    if rel is None and abs is None:
        rel = 1e-6
    tol = max((rel or 0.0) * math.fabs(e), abs or 0.0)
    if math.fabs(f - e) > tol:
        parts = []
        if rel:
            parts.append(f"{rel * 100:g}%")
        if abs:
            parts.append(f"{abs:g}")
        raise CheckFailed(f"{what}: outside tolerance",
                          expected=f"{e:.6g} ± {' or '.join(parts)} (|diff| <= {tol:.3g})",
                          found=f"{f:.6g} (|diff| = {math.fabs(f - e):.3g})")


def expect_range(what, found, low=None, high=None):
    """Passes when low <= found <= high (either bound may be None)."""
    f = _number(what, found)
    if (low is not None and f < low) or (high is not None and f > high):
        lo = "-inf" if low is None else f"{low:g}"
        hi = "+inf" if high is None else f"{high:g}"
        raise CheckFailed(f"{what}: out of range", expected=f"in [{lo}, {hi}]",
                          found=f"{f:.6g}")


def expect_match(what, text, pattern, tail=10):
    """Passes when the regular expression `pattern` matches a line of `text`.

    Returns the match object; on failure shows the last `tail` lines of text.
    """
    m = re.search(pattern, text or "", re.MULTILINE)
    if m is None:
        last = "\n".join((text or "").splitlines()[-tail:]) or "(no output)"
        raise CheckFailed(f"{what}: missing line", expected=f"a line matching /{pattern}/",
                          found="no such line", details="last lines of output:\n" + last)
    return m
