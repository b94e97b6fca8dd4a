#!/usr/bin/python3
"""Mutation fuzzer for lab specs (grader/labs/*.py): a malformed spec must give
SpecError "file:line: reason" from gradelib.spec.load_lab, never another exception.

    tests/fuzz/fuzz_spec.py [SECONDS] [--seed N]

Mutations of the real specs and the harness fixtures: deleted, duplicated or swapped
lines, changed characters, keyword arguments replaced by wrong types, and truncation.
Each mutant is loaded in this process under a 2 s alarm (a mutant that loops is
counted, not a finding). Findings are written to build/fuzz/findings/spec/.
"""

import os
import random
import shutil
import signal
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "grader"))
sys.dont_write_bytecode = True

from gradelib.spec import SpecError, load_lab  # noqa: E402

SEEDS = [os.path.join(ROOT, "grader", "labs", f) for f in sorted(os.listdir(
    os.path.join(ROOT, "grader", "labs"))) if f.endswith(".py")]
SEEDS += [os.path.join(ROOT, "tests", "grader", "fixtures", "grader", "labs", f)
          for f in ("example.py", "verdicts.py", "gating.py")]
VALUES = ["None", "-1", "1e309", "'x'", "[]", "{}", "()", "'cpu'", "'gpu'", "'nope'",
          "'performance'", "'a b'", "''", "10**6", "float('nan')", "{'gpus': 'x'}",
          "{'bogus': 1}", "'cpu.build'", "lambda: 0"]
KEYS = ["points", "backend", "timeout", "parent", "needs", "kind", "title", "program"]


class Alarm(Exception):
    pass


def mutate(rng, text):
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        if not lines:
            lines = [""]
        op = rng.randrange(7)
        i = rng.randrange(len(lines))
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3 and lines[i]:
            k = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:k] + rng.choice("()[]{}:,.'\"=#\\ x0") + lines[i][k + 1:]
        elif op == 4:
            key = rng.choice(KEYS)
            lines[i] = lines[i].replace(f"{key}=", f"{key}={rng.choice(VALUES)}, _{key}=", 1)
        elif op == 5:
            lines = lines[:i]
        else:
            key = rng.choice(KEYS)
            if f"{key}=" in lines[i]:
                head, tail = lines[i].split(f"{key}=", 1)
                rest = tail.split(",", 1)
                lines[i] = head + f"{key}={rng.choice(VALUES)}" + ("," + rest[1] if len(rest) > 1
                                                                  else ")")
    return "\n".join(lines)


def main():
    args = sys.argv[1:]
    seconds = int(args[0]) if args and args[0].isdigit() else 20
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else int(time.time())
    rng = random.Random(seed)
    warnings.simplefilter("ignore")
    texts = [open(p, encoding="utf-8").read() for p in SEEDS]
    tmp = tempfile.mkdtemp(prefix="commlab-fuzz-spec-")
    labs = os.path.join(tmp, "grader", "labs")
    os.makedirs(labs)
    findings = os.path.join(ROOT, "build", "fuzz", "findings", "spec")
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(Alarm()))
    counts = {"ok": 0, "spec_error": 0, "alarm": 0, "finding": 0}
    end = time.monotonic() + seconds
    n = 0
    try:
        while time.monotonic() < end:
            n += 1
            text = mutate(rng, rng.choice(texts))
            name = f"fuzz{n % 1000}"
            path = os.path.join(labs, name + ".py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            for m in [m for m in sys.modules if m.startswith("commlab_labs.")]:
                del sys.modules[m]
            signal.alarm(2)
            try:
                load_lab(tmp, name)
                counts["ok"] += 1
            except SpecError as e:
                msg = str(e)
                if not msg.startswith(path + ":") and not msg.startswith("lab "):
                    raise AssertionError(f"SpecError without file:line: {msg}")
                counts["spec_error"] += 1
            except Alarm:
                counts["alarm"] += 1
            except BaseException as e:      # noqa: B902 -- any other exception is a finding
                if isinstance(e, KeyboardInterrupt):
                    raise
                counts["finding"] += 1
                os.makedirs(findings, exist_ok=True)
                out = os.path.join(findings, f"spec-{seed}-{n}.py")
                with open(out, "w", encoding="utf-8") as f:
                    f.write(text)
                print(f"finding: {type(e).__name__}: {e} ({out})")
            finally:
                signal.alarm(0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"fuzz_spec: seed {seed}, {n} mutants in {seconds} s: {counts}")
    return 1 if counts["finding"] else 0


if __name__ == "__main__":
    sys.exit(main())
