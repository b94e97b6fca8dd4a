"""Typical wrong answers in lab02 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("NVLink count read from the wrong offset",
           "out->nvlinks = atoi(code + 2);", "out->nvlinks = atoi(code + 3);", ["cpu.codes"]),
    Mutant("glued cells not split (NV codes are always 3 characters)",
           'return 2 + strspn(s + 2, "0123456789");', "return 3;",
           ["cpu.split", "cpu.parse.hgx-a100", "cpu.parse.hgx-h200"]),
    Mutant("NIC legend ignored",
           "            apply_legend_line(line, out);", "            (void)apply_legend_line;",
           ["cpu.parse.hgx-a100", "cpu.parse.hgx-h200"]),
    Mutant("error reported one line late",
           'cl_set_error("%s:%d: %s", path, lineno, why);',
           'cl_set_error("%s:%d: %s", path, lineno + 1, why);', ["cpu.malformed"]),
    Mutant("X accepted off the diagonal",
           "if ((l->kind == CL_LINK_SELF) != (j == row)) {",
           "if (j == row && l->kind != CL_LINK_SELF) {", ["cpu.malformed"])
]
