/* compute.c: lab 11's computation, the "kernel" that overlaps with the AllReduce. */
#include "lab11.h"

void lab11_compute(const lab11_task *t, double *out, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i++) {
        uint64_t x = cl_data_hash(t->seed ^ i);
        for (int k = 0; k < t->work; k++) { /* a serial chain: no vectorising it away */
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            x ^= x >> 29;
        }
        out[i] = (double)(x >> 40);
    }
}
