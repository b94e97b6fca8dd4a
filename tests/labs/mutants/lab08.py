"""Typical wrong answers in lab08 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("ordinary least squares: the largest sizes decide alpha",
           "double w = 1.0 / (t * t);", "double w = 1.0;", ["cpu.fit", "cpu.heldout"]),
    Mutant("bandwidth in bytes per microsecond instead of GB/s",
           "out->bw_gbps = 1e-3 / g;", "out->bw_gbps = 1.0 / g;", ["cpu.fit", "cpu.heldout"]),
    Mutant("table by latency alone: the small-message winner everywhere",
           "if (fits[j].bw_gbps <= fits[cur].bw_gbps)", "if (1)", ["cpu.table", "cpu.tune"]),
    Mutant("table by bandwidth alone: the large-message winner everywhere",
           "double ti = predict(f, i, s), tb = predict(f, best, s);",
           "double ti = -f[i].bw_gbps, tb = -f[best].bw_gbps;", ["cpu.table", "cpu.tune"]),
    Mutant("rows that leave a gap between them",
           "rows[(*nrows)++] = (lab08_row){start, b - 1, cur};",
           "rows[(*nrows)++] = (lab08_row){start, b - 2, cur};", ["cpu.table", "cpu.tune"]),
    # The old lab's hole: a "model" that asks the simulator for the grader's own numbers.
    # The student's program has no simulator to call: it does not link.
    Mutant("the model asks the simulator instead of fitting",
           '#include "lab08.h"\n',
           '#include "lab08.h"\n#include "sim/sim.h"\n\n'
           "double lab08_oracle(double bytes);\ndouble lab08_oracle(double bytes)\n{\n    cl_sim_result r;\n"
           '    cl_sim_predict("dgx-h100", NULL, CL_COLL_ALLREDUCE, CL_ALGO_RING, bytes, &r);\n'
           "    return r.time_us;\n}\n", ["cpu.fit", "cpu.heldout"]),
]
