"""Performance scoring: interleaved student/baseline runs, medians and a linear ramp."""

import math
import statistics

from .verdicts import CheckFailed


def ramp(ratio, low, high):
    """Returns the fraction of points for ratio: 0 at or below low, 1 at or above high,
    linear in between."""
    if high <= low:
        return 1.0 if ratio >= high else 0.0
    return min(1.0, max(0.0, (ratio - low) / (high - low)))


def describe(name, value, baseline, ratio, low, high, unit):
    """Returns the report line, e.g. 'busbw 5.2 GB/s vs baseline 5.6 GB/s: ratio 0.93
    (>= 0.90 full, <= 0.80 none)'."""
    return (f"{name} {value:.4g} {unit} vs baseline {baseline:.4g} {unit}: ratio {ratio:.2f} "
            f"(>= {high:.2f} full, <= {low:.2f} none)")


def _sample(fn, who, i):
    v = fn()
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise CheckFailed(f"{who} measurement {i + 1} is not a positive number",
                          expected="a positive finite number", found=repr(v))
    return float(v)


def perf_ratio(ctx, student, baseline, repeats=5, higher_is_better=True, low=0.8, high=0.9,
               unit="GB/s", name="busbw"):
    """Measures student() and baseline() interleaved (b, s, b, s, ...) `repeats` times each,
    takes medians, and scores ratio = student/baseline (baseline/student when lower is
    better) on a ramp from `low` (no points) to `high` (full points).

    Records metrics value, baseline, ratio, unit, samples on ctx and returns a dict of them
    (with "fraction"). Raises CheckFailed when a callable returns a non-positive value.
    """
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    s_samples, b_samples = [], []
    for i in range(repeats):
        b_samples.append(_sample(baseline, "baseline", i))
        s_samples.append(_sample(student, "student", i))
    value = statistics.median(s_samples)
    base = statistics.median(b_samples)
    ratio = value / base if higher_is_better else base / value
    fraction = round(ramp(ratio, low, high), 4)
    out = {"name": name, "value": value, "baseline": base, "ratio": round(ratio, 4),
           "unit": unit, "low": low, "high": high, "higher_is_better": higher_is_better,
           "fraction": fraction, "samples": s_samples, "baseline_samples": b_samples}
    ctx.metrics.update(out)
    ctx.perf_fractions.append(fraction)
    ctx.perf_messages.append(describe(name, value, base, ratio, low, high, unit))
    ctx.log(ctx.perf_messages[-1])
    return out


def perf_samples(ctx, student, baseline, higher_is_better=True, low=0.8, high=0.9,
                 unit="GB/s", name="busbw"):
    """Scores samples a lab's program already measured interleaved (baseline, student,
    baseline, ...): the ratio is the median of the per-pair ratios (paired samples, so a
    slow moment of the machine hits both sides of a pair), on a ramp from `low` to `high`.

    Records and returns the same metrics as perf_ratio. Raises CheckFailed when the lists
    differ in length, are empty, or hold a non-positive value."""
    if len(student) != len(baseline) or not student:
        raise CheckFailed(f"{name}: {len(student)} samples of yours and {len(baseline)} of the "
                          f"baseline", expected="the same number, at least one",
                          found=f"{len(student)} and {len(baseline)}")
    s = [_sample(lambda v=v: v, "student", i) for i, v in enumerate(student)]
    b = [_sample(lambda v=v: v, "baseline", i) for i, v in enumerate(baseline)]
    pairs = [x / y if higher_is_better else y / x for x, y in zip(s, b)]
    ratio = statistics.median(pairs)
    value, base = statistics.median(s), statistics.median(b)
    fraction = round(ramp(ratio, low, high), 4)
    out = {"name": name, "value": value, "baseline": base, "ratio": round(ratio, 4),
           "unit": unit, "low": low, "high": high, "higher_is_better": higher_is_better,
           "fraction": fraction, "samples": s, "baseline_samples": b,
           "paired_ratios": [round(x, 4) for x in pairs]}
    ctx.metrics.update(out)
    ctx.perf_fractions.append(fraction)
    ctx.perf_messages.append(describe(name, value, base, ratio, low, high, unit) +
                             " (median of paired ratios)")
    ctx.log(ctx.perf_messages[-1])
    return out
