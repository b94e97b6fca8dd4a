"""The planning labs (lab07, lab29): the student's launch plan for each case, as the lab's
`plan` mode costs it, and what every plan must be before its speed counts.

A case is a dict with the case's key=value pairs under "keys". Its plan row (under "plan")
has the status of the student's planner, plan_error (why the harness cannot launch the
plan, or ""), fits and mem_gb (one GPU's memory), calls (of the case's budget), step_s, and
the plan's own columns (its layout, visible: its CUDA_VISIBLE_DEVICES).
"""

from .expect import expect
from .verdicts import CheckFailed


def run_plans(ctx, cases):
    """Adds each case's plan row under "plan"; returns cases. One run for every case: after a
    failure, its reproduce line names every case's file."""
    for c, row in zip(cases, ctx.run_cases("plan", [c["keys"] for c in cases])):
        c["plan"] = row
    return cases


def check_plans(cases, where, *, planner, launchable, layout, gib, calls, budget):
    """Every case's plan: the planner (the student's function) succeeded, the harness can
    launch the plan (launchable: what that takes), it fits in a GPU's memory (gib(case): GiB)
    and it kept to the budget of calls (calls: what is counted). where(case) names a case in
    a failure, layout(plan) the plan's layout. Returns cases."""
    for c in cases:
        p = c["plan"]
        expect(f"{where(c)}: status of {planner}", p["status"], "success")
        if p["plan_error"]:
            raise CheckFailed(f"{where(c)}: the harness cannot launch your plan",
                              expected=launchable, found=p["plan_error"])
        if not p["fits"]:
            raise CheckFailed(f"{where(c)}: {layout(p)} does not fit in a GPU's memory",
                              expected=f"at most {gib(c)} GiB", found=f"{p['mem_gb']:.1f} GB")
        if p["calls"] > budget:
            raise CheckFailed(f"{where(c)}: too many {calls}", expected=f"<= {budget}",
                              found=str(p["calls"]))
    return cases


def expect_as_fast_as_fix(what, plan, fix, fix_text, plan_text):
    """The plan's step no slower (up to rounding) than the chapter's fix: fix is the reference
    mode's row of the best plan with the fix's layout. fix_text and plan_text describe the
    two plans in a failure."""
    if plan["step_s"] > fix["best_step_s"] * (1 + 1e-6):
        raise CheckFailed(f"{what}: your plan is slower than the chapter's fix",
                          expected=f"<= {fix['best_step_s']:.4f} s per step ({fix_text})",
                          found=f"{plan['step_s']:.4f} s with {plan_text}")
