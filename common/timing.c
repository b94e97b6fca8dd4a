/* timing.c: monotonic clock and page pre-touching. */
#include "timing.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

double cl_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cl_sleep_until(double t)
{
    for (double left = t - cl_wtime(); left > 0; left = t - cl_wtime()) { /* signals wake it */
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

void cl_pretouch(void *buf, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    volatile unsigned char *p = buf;
    if (page <= 0)
        page = 4096;
    for (size_t off = 0; off < bytes; off += (size_t)page)
        p[off] = 0;
    if (bytes)
        p[bytes - 1] = 0;
}
