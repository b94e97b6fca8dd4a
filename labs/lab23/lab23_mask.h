/* lab23_mask.h: lab 23's dropout mask, the same in the student's program and the harness. */
#ifndef COMMLAB_LAB23_MASK_H
#define COMMLAB_LAB23_MASK_H

#include <stdint.h>

/* Whether element (row, col) of O survives dropout with probability p of being
 * dropped: a function of the call's seed and the element's place in the whole
 * batch (its global row), never of the rank that computes it. This function
 * can't fail. */
static inline int lab23_keep(uint64_t seed, long row, int col, int h, float p)
{
    uint64_t x = seed + ((uint64_t)row * (uint64_t)h + (uint64_t)col + 1) * 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL; /* splitmix64's finaliser */
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53 >= p;
}

#endif /* COMMLAB_LAB23_MASK_H */
