"""gradelib: the CommLab grading harness (lab specs import their API from here)."""

from .spec import Lab, Check, SpecError
from .verdicts import (CheckFailed, CheckSkipped, CheckCrashed, CheckTimeout,
                       PASS, FAIL, TIMEOUT, CRASH, SKIP, BUILD_ERROR)
from .expect import expect, expect_close, expect_range, expect_match
from .perf import perf_ratio, perf_samples, ramp
from .runner import Result

__all__ = [
    "Lab", "Check", "SpecError",
    "CheckFailed", "CheckSkipped", "CheckCrashed", "CheckTimeout",
    "PASS", "FAIL", "TIMEOUT", "CRASH", "SKIP", "BUILD_ERROR",
    "expect", "expect_close", "expect_range", "expect_match",
    "perf_ratio", "perf_samples", "ramp", "Result",
]
