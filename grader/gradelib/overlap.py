"""Checks shared by the labs that overlap the AllReduce of a backward pass's gradients with
the pass's kernels (lab11, lab24): the rows of their step and gpu modes
(common/harness/overlap.h), each sample set against the kernels alone and the library's
AllReduce alone, measured in the same run."""

import statistics

from .expect import expect
from .perf import perf_samples
from .verdicts import CheckFailed


def check_summed(row, what):
    """Raises CheckFailed when the step left gradient elements that are not the sum."""
    if row["wrong"]:
        raise CheckFailed(f"{what}: {row['wrong']} wrong gradient elements after your step "
                          f"(an AllReduce started before its gradients existed?)",
                          expected="the sum over the ranks, exactly", found="other values")


def alone_s(row):
    """Each sample's max(kernels alone, AllReduce alone): the step's baseline."""
    return [max(k, a) for k, a in zip(row["kernels_s"], row["allreduce_s"])]


def score_step(ctx, row, high, low, name):
    """Scores the step's samples against max(kernels alone, AllReduce alone), sample by
    sample: full marks at or under 1 / high times that, none from 1 / low."""
    perf_samples(ctx, student=row["step_s"], baseline=alone_s(row), higher_is_better=False,
                 low=low, high=high, unit="s", name=name)


def cpu_step_checks(lab, check_step):
    """Registers the step on 2 MPI ranks: cpu.step runs it (5 samples) and cpu.correct checks
    it with check_step(data, what). Its time is reported, not scored: on cpu the modelled
    GPU's kernels and the AllReduce's progress take turns on one core per rank, so a step
    that waits for each AllReduce at once measures the same as one that overlaps (the
    simulated and the GPU checks score the overlap)."""

    @lab.check("cpu.step", "The step runs on 2 MPI ranks", points=0, backend="cpu", timeout=150)
    def cpu_step(ctx):
        return ctx.run_lab("step", ["--repeats", "5"], ranks=2, backend="cpu")

    @lab.check("cpu.correct", "Every gradient summed, every kernel run (MPI)", points=10,
               backend="cpu", parent="cpu.step")
    def cpu_correct(ctx, data):
        check_step(data, "2 MPI ranks")
        row = data["rows"][0]
        ratio = statistics.median(s / b for s, b in zip(row["step_s"], alone_s(row)))
        ctx.metric("step_over_max_kernels_allreduce", round(ratio, 4))
        ctx.log(f"your step / max(kernels, AllReduce): {ratio:.2f} (median of paired ratios; "
                f"reported, not scored, on cpu)")


def run_gpu(ctx, wrong_what):
    """The gpu mode on the check's GPUs (5 samples); fails unless its row has no wrong
    elements (wrong_what says which)."""
    ngpus = ctx.resources.get("gpus", 2)
    data = ctx.run_lab("gpu", ["--repeats", "5"], ranks=ngpus, backend="gpu", timeout=240)
    expect(wrong_what, data["rows"][0]["wrong"], 0)
    return data
