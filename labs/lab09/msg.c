/* msg.c: lab 09's sequence-numbered, checksummed test messages. */
#include "msg.h"

#include <string.h>

#include "data.h"

static uint64_t checksum(const unsigned char *buf, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ buf[i]) * 0x100000001b3ull;
    return h;
}

void lab09_msg_fill(unsigned char *buf, size_t bytes, uint64_t seq, uint64_t seed)
{
    uint64_t base = cl_data_hash(seed ^ (seq * 0x9e3779b97f4a7c15ull));
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = cl_data_hash(base + i);
        for (size_t k = 0; k < 8 && i + k < bytes; k++)
            buf[i + k] = (unsigned char)(v >> (8 * k));
    }
    if (bytes >= 16) {
        memcpy(buf, &seq, 8);
        uint64_t sum = checksum(buf, bytes - 8);
        memcpy(buf + bytes - 8, &sum, 8);
    }
}

int lab09_msg_check(const unsigned char *buf, size_t bytes, uint64_t seq, uint64_t seed)
{
    size_t lo = 0, hi = bytes; /* the pseudo-random bytes */
    if (bytes >= 16) {
        uint64_t got_seq, got_sum;
        memcpy(&got_seq, buf, 8);
        memcpy(&got_sum, buf + bytes - 8, 8);
        int whole = checksum(buf, bytes - 8) == got_sum;
        if (got_seq != seq && whole)
            return 1; /* a whole, intact message, but not the one due */
        if (got_seq != seq || !whole)
            return 2;
        lo = 8, hi = bytes - 8;
    }
    uint64_t base = cl_data_hash(seed ^ (seq * 0x9e3779b97f4a7c15ull));
    uint64_t word = cl_data_hash(base + (lo & ~(size_t)7));
    for (size_t i = lo; i < hi; i++) {
        if (i % 8 == 0)
            word = cl_data_hash(base + i);
        if (buf[i] != (unsigned char)(word >> (8 * (i % 8))))
            return 2;
    }
    return 0;
}

size_t lab09_msg_size(uint64_t seq, uint64_t seed, size_t chunk)
{
    uint64_t h = cl_data_hash(seed + 0x51ed27 + seq * 0x2545f4914f6cdd1dull);
    switch (h % 8) {
    case 0: return (h >> 8) % 3 == 0 ? 0 : 1 + (h >> 8) % 15; /* empty and tiny */
    case 1: return chunk - 1;
    case 2: return chunk;
    case 3: return chunk + 1;
    case 4: return chunk * (1 + (h >> 8) % 5);
    default: return (size_t)((h >> 8) % (6 * chunk + 1));
    }
}
