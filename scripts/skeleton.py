#!/usr/bin/python3
"""skeleton.py: generate labs/labNN/labNN.c from solutions/labNN/labNN.c.

The reference solution is the one source of truth. In it, each piece the
student writes sits between markers, followed by the stub that replaces it:

        /* BEGIN SOLUTION */
        ... the reference code ...
        /* END SOLUTION */
        /* BEGIN SKELETON
        // TODO(lab01) 2: fit alpha and beta ...
        return CL_ERR_NOT_IMPLEMENTED;
        END SKELETON */

The skeleton drops the solution lines and un-comments the stub lines (the
stub is a comment in the solution, so both files compile). Unbalanced or
nested markers are fatal, with file:line. The result goes through clang-format
(the repository's .clang-format), so a skeleton is formatted like every file.

  skeleton.py --write lab01 lab02   regenerate the skeletons
  skeleton.py --check lab01 lab02   fail (exit 1) if a skeleton differs
"""
import difflib
import os
import re
import shutil
import subprocess
import sys

BEGIN_SOL = re.compile(r"^\s*/\* BEGIN SOLUTION \*/\s*$")
END_SOL = re.compile(r"^\s*/\* END SOLUTION \*/\s*$")
BEGIN_SKEL = re.compile(r"^\s*/\* BEGIN SKELETON\s*$")
END_SKEL = re.compile(r"^\s*END SKELETON \*/\s*$")


class MarkerError(Exception):
    pass


def generate(path, text):
    out, state = [], "code"
    start = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        where = f"{path}:{number}"
        if BEGIN_SOL.match(line):
            if state != "code":
                raise MarkerError(f"{where}: BEGIN SOLUTION inside an open block (line {start})")
            state, start = "solution", number
        elif END_SOL.match(line):
            if state != "solution":
                raise MarkerError(f"{where}: END SOLUTION without BEGIN SOLUTION")
            state = "after-solution"
        elif BEGIN_SKEL.match(line):
            if state != "after-solution":
                raise MarkerError(f"{where}: BEGIN SKELETON must follow END SOLUTION")
            state, start = "skeleton", number
        elif END_SKEL.match(line):
            if state != "skeleton":
                raise MarkerError(f"{where}: END SKELETON without BEGIN SKELETON")
            state = "code"
        elif state == "solution":
            continue
        else:
            if state == "after-solution":
                state = "code"  # a solution block with no stub: it just disappears
            out.append(line)
    if state in ("solution", "skeleton"):
        raise MarkerError(f"{path}:{start}: block opened here is never closed")
    result = "".join(out)
    if "SOLUTION" in result or "SKELETON" in result:
        raise MarkerError(f"{path}: a marker is misspelt or misplaced (it survived generation)")
    return result


def clang_format(path, text):
    """The generated text as `make format` would leave it."""
    tool = shutil.which("clang-format")
    if tool is None:
        raise MarkerError("clang-format is not installed (make deps installs it)")
    run = subprocess.run([tool, f"--assume-filename={path}"], input=text, capture_output=True,
                         text=True, check=False)
    if run.returncode != 0:
        raise MarkerError(f"{path}: clang-format failed: {run.stderr.strip()}")
    return run.stdout


def lab_paths(lab):
    return f"solutions/{lab}/{lab}.c", f"labs/{lab}/{lab}.c"


def main(argv):
    if len(argv) < 2 or argv[0] not in ("--write", "--check"):
        print(__doc__.strip().splitlines()[-2:], file=sys.stderr)
        return 2
    mode, labs = argv[0], argv[1:]
    failed = 0
    for lab in labs:
        source, target = lab_paths(lab)
        try:
            with open(source, encoding="utf-8") as f:
                skeleton = clang_format(target, generate(source, f.read()))
        except (OSError, MarkerError) as e:
            print(f"skeleton: {e}", file=sys.stderr)
            failed += 1
            continue
        if f"TODO({lab})" not in skeleton:
            print(f"skeleton: {source}: no TODO({lab}) marker in the generated skeleton", file=sys.stderr)
            failed += 1
            continue
        current = open(target, encoding="utf-8").read() if os.path.exists(target) else ""
        if mode == "--write":
            if current != skeleton:
                with open(target, "w", encoding="utf-8") as f:
                    f.write(skeleton)
                print(f"  GEN    {target}")
        elif current != skeleton:
            diff = difflib.unified_diff(current.splitlines(True), skeleton.splitlines(True),
                                        target, f"{target} (from {source})")
            sys.stderr.writelines(list(diff)[:40])
            print(f"skeleton: {target} differs from what {source} generates; run `make skeletons`",
                  file=sys.stderr)
            failed += 1
    if mode == "--check" and not failed:
        print(f"skeletons: {len(labs)} up to date")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
