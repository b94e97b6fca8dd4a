"""Checks shared by the collective labs: the rows of the harness's collective suite
(common/harness/coll_suite.h) and its performance rows."""

from .perf import perf_samples
from .verdicts import CheckFailed

BAD_COLUMNS = (("#wrong", "wrong output elements"),
               ("overrun", "elements written past the end of recvbuf"),
               ("input_changed", "elements of sendbuf modified"))


def where(row, ranks=None):
    """A short description of a test: 'allreduce on 4 rank(s), count 4099 (float, sum, root 0)'."""
    on = f" on {ranks} rank(s)" if ranks is not None else ""
    root = f", root {row['root']}" if row.get("root", -1) >= 0 else ""
    return f"{row['name']}{on}, count {row['count']} ({row['type']}, {row['redop']}{root})"


def check_row(row, ranks=None):
    """Raises CheckFailed when one test of the suite went wrong."""
    w = where(row, ranks)
    if row["status"] != "success":
        raise CheckFailed(f"{w}: your function returned an error", expected="success",
                          found=f"{row['status']}: {row.get('error', '')}".strip())
    if row.get("forbidden", "-") not in ("-", "", None):
        raise CheckFailed(f"{w}: an operation this collective may not use",
                          expected="only transfers, local reductions and copies, your own "
                                   "buffers", found=row["forbidden"])
    for key, what in BAD_COLUMNS:
        if row.get(key):
            raise CheckFailed(f"{w}: {what}", expected="0", found=str(row[key]))
    if row.get("pattern", "ok") != "ok":
        raise CheckFailed(f"{w}: the messages do not follow the algorithm",
                          expected="the algorithm's message pattern", found=row["pattern"])


def verify_collective(results, name):
    """Raises CheckFailed for the first test of collective `name` that went wrong in any run
    of `results` ({ranks: the verify mode's results}); also when none ran."""
    ran = 0
    for ranks, res in sorted(results.items()):
        for row in res["rows"]:
            if row["name"] == name:
                ran += 1
                check_row(row, ranks)
    if not ran:
        raise CheckFailed(f"no {name} test ran", expected="tests of " + name, found="none")


def bench_row(data, name=None):
    """The one row of a bench (or the row of `name`), checked for correctness first."""
    rows = [r for r in data["rows"] if name is None or r["name"] == name]
    if not rows:
        raise CheckFailed("the benchmark produced no row", expected=name or "a row", found="none")
    check_row(rows[0])
    if rows[0].get("base_wrong"):
        raise CheckFailed("the library's own collective gave wrong data (a harness problem)",
                          expected="0", found=str(rows[0]["base_wrong"]))
    return rows[0]


def score_busbw(ctx, row, low, high, name="busbw"):
    """Scores the student's busbw samples of a bench row against the library's, paired."""
    return perf_samples(ctx, student=row["busbw"], baseline=row["base_busbw"], low=low,
                        high=high, unit="GB/s", name=name)
