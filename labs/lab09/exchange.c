/* exchange.c: the student program's end of lab 09's exchanges: messages one after another. */
#include <stdio.h>
#include <time.h>

#include "exchange.h"

lab09_ring *lab09_ring_of(const layout *L, int k, lab09_ring *r)
{
    if (k < 0)
        return NULL;
    lab09_ring_map(r, L->base + (size_t)k * L->ring_bytes, L->nslots, L->chunk);
    return r;
}

static void pause_for(unsigned us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < (long)us * 1000);
}

cl_result lab09_exchange(lab09_ring *tx, lab09_ring *rx, const unsigned char *sbuf,
                         unsigned char *rbuf, int n, const uint32_t *ssize, const uint32_t *rsize,
                         const uint16_t *pause_us)
{
    size_t so = 0, ro = 0;
    for (int k = 0; k < n; k++) {
        if (pause_us && pause_us[k])
            pause_for(pause_us[k]);
        cl_result rc = lab09_sendrecv(tx, sbuf + so, ssize[k], rx, rbuf + ro, rsize[k]);
        if (rc != CL_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", cl_last_error());
            cl_set_error("lab09_sendrecv, message %d: %s", k, why[0] ? why : cl_result_str(rc));
            return rc;
        }
        so += ssize[k] + GAP;
        ro += rsize[k] + GAP;
    }
    return CL_OK;
}
