/* harness_patterns.c: lab 06's message patterns: each algorithm's (harness/patterns.h), in
 * lab06_algo order, and the selected AllReduce's, which must be one of the four.
 */
#include <stdio.h>

#include "lab06_harness.h"

/* Each algorithm's message pattern (harness/patterns.h), in lab06_algo order. */
const cl_pattern_fn patterns[NALGO] = {cl_pattern_ring_allreduce, cl_pattern_recursive_doubling,
                                       cl_pattern_halving_doubling, cl_pattern_binomial_allreduce};

/* The selected AllReduce: the pattern of one of the four algorithms. */
int pattern_any(const cl_comm *c, const cl_coll_args *a, const cl_trace_event *ev, int n, char *why,
                size_t len)
{
    char ignored[200];
    for (int i = 0; i < NALGO; i++)
        if (patterns[i](c, a, ev, n, ignored, sizeof ignored))
            return 1;
    snprintf(why, len,
             "the messages match none of ring, recursive doubling, Rabenseifner and "
             "the binomial tree");
    return 0;
}
