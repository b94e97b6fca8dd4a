"""Chooses which checks to run: filters by id prefix or glob, plus their dependencies."""

import fnmatch


class UnknownFilter(Exception):
    """A filter matched no check id."""


def _matches(pattern, check_id):
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(check_id, pattern)
    return check_id.startswith(pattern)


def select(lab, filters):
    """Returns the ids chosen by filters (all checks when there are none).

    Raises UnknownFilter naming the first filter that matches nothing.
    """
    if not filters:
        return [c.id for c in lab.checks]
    chosen = []
    for pattern in filters:
        hits = [c.id for c in lab.checks if _matches(pattern, c.id)]
        if not hits:
            raise UnknownFilter(pattern)
        chosen += [h for h in hits if h not in chosen]
    return [c.id for c in lab.checks if c.id in chosen]


def run_order(lab, selected):
    """Returns the checks to run: the selected ones and everything they depend on
    (parents, and correctness checks gating a performance check), dependencies first,
    otherwise in the order the spec declares them."""
    order, seen = [], set()

    def visit(chk):
        if chk.id in seen:
            return
        seen.add(chk.id)
        for dep in lab.dependencies(chk):
            visit(dep)
        order.append(chk)

    for chk in lab.checks:
        if chk.id in selected:
            visit(chk)
    return order
