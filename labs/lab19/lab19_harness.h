/* lab19_harness.h: lab 19's harness-side parts, shared by driver.c and the harness_*.c files. */
#ifndef COMMLAB_LAB19_HARNESS_H
#define COMMLAB_LAB19_HARNESS_H

#include "harness/harness.h"
#include "lab19_args.h"

/* Read a fabric file (harness_fabric.c): `gpus_per_node G`, `node_gbps B`,
 * `switch NAME level L parent P|- up_gbps U` (parents before children) and
 * `node NAME LEAF` lines, '#' comments. CL_ERR_PARSE with "file:line: why"
 * for anything else, and for a fabric that is not one tree. */
cl_result lab19_read_fabric(const char *path, lab19_fabric *f);

/* The replay mode's case (harness_replay.c). */
cl_result lab19_replay_case(cl_case *c);

#endif /* COMMLAB_LAB19_HARNESS_H */
