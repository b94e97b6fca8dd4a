/* toylab.h: the smallest lab the harness can run, one function of each kind.
 *
 * It exists to show, and to test, that a lab written against the plug-in API
 * (common/harness/harness.h) needs no main(), no option parser, no timing and
 * no JSON of its own: driver.c only declares its modes.
 */
#ifndef TOYLAB_H
#define TOYLAB_H

#include <stddef.h>

#include "p2p.h"

/* A pure function: *out = x * k. */
cl_result toy_scale(double x, double k, double *out);

/* Every rank sends its `bytes` of in to rank + hops (wrapping; 0 < hops < ranks) and
 * receives rank - hops's into out. */
cl_result toy_shift(cl_comm *c, const void *in, void *out, size_t bytes, int hops);

#endif
