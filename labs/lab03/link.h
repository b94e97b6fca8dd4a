/* link.h: lab 03's transports (shared memory between ranks, GPU peer copies) and their trace. */
#ifndef COMMLAB_LAB03_LINK_H
#define COMMLAB_LAB03_LINK_H

#include "lab03.h"

#define LAB03_MAX_T (2 * LAB03_MAX_REPEATS + 8)

/* What one process did between two lab03_sync() calls: the operations of one
 * pair and its clock readings. The grader rebuilds the methodology from it. */
typedef struct lab03_record {
    int kind, i, j;
    int mixed;              /* operations of more than one (kind, i, j, bytes) */
    long long bytes;
    long long ops;          /* operations made */
    int nt;                 /* clock readings kept (at most LAB03_MAX_T) */
    int t_overflow;         /* more readings than kept */
    long long t_ops[LAB03_MAX_T]; /* operations made before each reading */
    double t[LAB03_MAX_T];        /* each reading */
} lab03_record;

/* Open the shared-memory transport over a cpu communicator, for messages of up
 * to max_bytes. Collective. CL_ERR_IO/NOMEM when memory cannot be set up. */
cl_result lab03_link_open_cpu(cl_comm *comm, size_t max_bytes, lab03_link **out);

/* Open the GPU transport over every visible GPU of this process.
 * CL_ERR_UNSUPPORTED (with the CUDA error) where no GPU can be used. */
cl_result lab03_link_open_gpu(size_t max_bytes, lab03_link **out);

/* Close, free and (cpu) detach the shared memory. */
cl_result lab03_link_close(lab03_link *l);

/* This process's rank (0 on gpu); its records so far (closed by lab03_sync)
 * and the number of operations whose data arrived wrong. */
int lab03_link_rank(const lab03_link *l);
const lab03_record *lab03_link_records(const lab03_link *l, int *n);
long long lab03_link_bad(const lab03_link *l);

/* Forget the records (between phases of the driver). */
void lab03_link_clear(lab03_link *l);

#endif /* COMMLAB_LAB03_LINK_H */
