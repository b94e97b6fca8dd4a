/* lab11_netem.h: lab 11's emulated link under MPI_Iallreduce (netem.c). */
#ifndef COMMLAB_LAB11_NETEM_H
#define COMMLAB_LAB11_NETEM_H

#include <stddef.h>

/* Route every later MPI_Iallreduce of this process through a link of gbps
 * GB/s with latency_s per segment (gbps <= 0: plain MPI). This function can't fail. */
void lab11_netem_configure(double gbps, double latency_s);

/* Wire time of one segment of an AllReduce of `bytes` over nranks ranks. */
double lab11_netem_segment_s(size_t bytes, int nranks);

#endif /* COMMLAB_LAB11_NETEM_H */
