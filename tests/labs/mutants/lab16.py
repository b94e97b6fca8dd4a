"""Typical wrong answers in lab16 and the checks that must catch them."""

from tests.labs.mutants import Mutant

MUTANTS = [
    Mutant("alpha raised before the cut (the cut uses the new alpha)",
           "        rp->rc_gbps *= 1 - rp->alpha / 2;\n"
           "        rp->alpha = (1 - p->g) * rp->alpha + p->g;\n",
           "        rp->alpha = (1 - p->g) * rp->alpha + p->g;\n"
           "        rp->rc_gbps *= 1 - rp->alpha / 2;\n", ["sim.rp"]),
    Mutant("hyper increase by one R_HAI every time, not i of them",
           "(lo - p->f + 1) * p->rhai_mbps", "p->rhai_mbps", ["sim.rp"]),
    Mutant("the byte counter kept across a CNP",
           "rp->alpha_clock_us = rp->timer_clock_us = rp->bytes = 0;",
           "rp->alpha_clock_us = rp->timer_clock_us = 0;", ["sim.rp"]),
    Mutant("no fast recovery: additive increase from the first event",
           "    else if (hi >= p->f)\n", "    else\n", ["sim.rp"]),
    Mutant("the paper's 40 Gb/s thresholds at every speed (Kmin 5 KB, Kmax 200 KB)",
           "    p->kmax_kb = 0.5 * top;\n    p->kmin_kb = 0.2 * top;\n",
           "    p->kmax_kb = 200;\n    p->kmin_kb = 5;\n", ["sim.incast.25g"]),
    Mutant("steps and byte counter not scaled with the line rate",
           "    double scale = port->line_gbps / 40;\n", "    double scale = 1;\n",
           ["sim.incast.400g"]),
    Mutant("a fixed share of the line instead of the reaction point (it would know N)",
           "    if (ev->cnp) {\n        rp->rt_gbps = rp->rc_gbps;\n",
           "    if (ev->bytes > 0) {\n        rp->rc_gbps = rp->rt_gbps = line_gbps / 4;\n"
           "        return;\n    }\n    if (ev->cnp) {\n        rp->rt_gbps = rp->rc_gbps;\n",
           ["sim.incast.100g"]),
]
