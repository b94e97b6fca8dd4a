/* harness_case.c: lab 30's fabrics (two switched, two tori) and a case: its fabric= and its
 * points=GPUS:BYTES,...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab30_harness.h"

/* The fabrics; sources in datasets/lab30/README.md. Both switched ones are a DGX H100 SuperPOD
 * (with SHARP or without), both tori the same chips and links in 2 or 3 dimensions. */
#define DGX_H100_SUPERPOD                                                                          \
    .kind = LAB30_SWITCHED, .gpus_per_node = 8, .nvlink_gbps = 18 * 20.6, .nic_gbps = 48,          \
    .probe_max_gpus = 1024, .budget = 20
#define TORUS                                                                                      \
    .kind = LAB30_TORUS_FABRIC, .algos = ALGO_BIT(LAB30_RING) | ALGO_BIT(LAB30_TORUS),             \
    .link_gbps = 45, .hop_us = 1.0, .launch_us = 10, .probe_max_gpus = 1024, .budget = 20
static const struct fabric_def FABRICS[] = {
    {{.name = "superpod",
      .algos = ALGO_BIT(LAB30_RING) | ALGO_BIT(LAB30_TREE) | ALGO_BIT(LAB30_NVLS_TREE),
      DGX_H100_SUPERPOD},
     "dgx-h100"},
    {{.name = "superpod-sharp",
      .algos = ALGO_BIT(LAB30_RING) | ALGO_BIT(LAB30_TREE) | ALGO_BIT(LAB30_NVLS_TREE) |
               ALGO_BIT(LAB30_NVLS),
      .sharp = 1,
      DGX_H100_SUPERPOD},
     "dgx-h100"},
    {{.name = "torus2d", .ndims = 2, TORUS}, NULL},
    {{.name = "torus3d", .ndims = 3, TORUS}, NULL},
};
#define NFABRICS ((int)(sizeof FABRICS / sizeof FABRICS[0]))

struct current current_case;

/* --- cases -------------------------------------------------------------------------------- */

cl_result load_case(cl_case *c, choose_args *a)
{
    const char *name, *text;
    CL_CHECK(cl_case_str(c, "fabric", &name));
    CL_CHECK(cl_case_str(c, "points", &text));
    current_case.def = NULL;
    for (int i = 0; i < NFABRICS; i++)
        if (!strcmp(FABRICS[i].f.name, name))
            current_case.def = &FABRICS[i];
    if (!current_case.def) {
        cl_set_error("fabric=%s: superpod, superpod-sharp, torus2d or torus3d", name);
        return CL_ERR_INVALID;
    }
    current_case.calls = 0;
    memset(a, 0, sizeof *a);
    a->f = current_case.def->f;
    for (const char *s = text; *s;) {
        char *end;
        long g = strtol(s, &end, 10);
        if (end == s || *end != ':' || a->n == LAB30_MAX_POINTS) {
            cl_set_error("points=%s: up to %d GPUS:BYTES pairs separated by commas", text,
                         LAB30_MAX_POINTS);
            return CL_ERR_INVALID;
        }
        size_t bytes;
        char size[32];
        const char *b = end + 1, *stop = strchr(b, ',');
        size_t len = stop ? (size_t)(stop - b) : strlen(b);
        snprintf(size, sizeof size, "%.*s", (int)(len < 31 ? len : 31), b);
        CL_CHECK(cl_parse_size(size, &bytes));
        a->pts[a->n++] = (lab30_point){.gpus = g, .bytes = (double)bytes};
        s = stop ? stop + 1 : b + len;
    }
    return CL_OK;
}
