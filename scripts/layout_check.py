#!/usr/bin/python3
"""layout_check.py: every lab keeps the house layout (docs/writing-a-lab.md).

  - the files a lab is made of exist: labs/labNN/{labNN.c,labNN.h,driver.c,README.md,Makefile},
    solutions/labNN/labNN.c, grader/labs/labNN.py, tests/labs/mutants/labNN.py;
  - driver.c is the plug-in's entries and table: at most 200 lines, 80 for a collective lab
    (one whose table has `.collectives`); the rest of the plug-in lives in harness_*.c files;
  - each plug-in file opens with a comment naming itself and its job: "/* harness_plan.c: ...".

Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER_MAX = 200
COLLECTIVE_DRIVER_MAX = 80


def required_files(lab):
    return [f"labs/{lab}/{lab}.c", f"labs/{lab}/{lab}.h", f"labs/{lab}/driver.c",
            f"labs/{lab}/README.md", f"labs/{lab}/Makefile", f"solutions/{lab}/{lab}.c",
            f"grader/labs/{lab}.py", f"tests/labs/mutants/{lab}.py"]


def plugin_files(lab):
    folder = os.path.join(ROOT, "labs", lab)
    return sorted(name for name in os.listdir(folder)
                  if name == "driver.c" or re.fullmatch(r"harness_\w+\.c", name))


def problems_of(lab):
    for path in required_files(lab):
        if not os.path.isfile(os.path.join(ROOT, path)):
            yield f"{path}: missing"
    for name in plugin_files(lab):
        path = f"labs/{lab}/{name}"
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        if not text.startswith(f"/* {name}: "):
            yield f"{path}: does not open with \"/* {name}: <its job>\""
        if name == "driver.c":
            collective = ".collectives" in text
            limit = COLLECTIVE_DRIVER_MAX if collective else DRIVER_MAX
            lines = text.count("\n")
            if lines > limit:
                kind = "a collective lab's" if collective else "a lab's"
                yield (f"{path}: {lines} lines, {kind} driver has at most {limit}: "
                       "move harness-only code to harness_<job>.c files")


def main():
    labs = sorted(d for d in os.listdir(os.path.join(ROOT, "labs"))
                  if re.fullmatch(r"lab\d\d", d))
    problems = [p for lab in labs for p in problems_of(lab)]
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"layout-check: {len(labs)} labs keep the layout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
