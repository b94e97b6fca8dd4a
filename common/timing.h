/* timing.h: monotonic wall-clock time and buffer pre-touching for benchmarks. */
#ifndef COMMLAB_TIMING_H
#define COMMLAB_TIMING_H

#include <stddef.h>

/* Seconds from an arbitrary fixed point (CLOCK_MONOTONIC). This function can't fail. */
double cl_wtime(void);

/* Sleep until cl_wtime() reaches t (at once if it has): a rate or a computation
 * imitated in real time. This function can't fail. */
void cl_sleep_until(double t);

/* Write every page of buf once, so that the first-touch page faults (about
 * 14 us per 4 KiB page on some VMs) are not charged to a timed loop. */
void cl_pretouch(void *buf, size_t bytes);

#endif /* COMMLAB_TIMING_H */
