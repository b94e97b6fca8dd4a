/* harness_payload.c: lab 09's payloads: fresh bytes in the sender's private buffer, and the
 * count of the bytes that arrived wrong.
 */
#include <string.h>

#include "lab09_harness.h"

/* Position i of owner's stream of seed is byte i % 8 of one hash per 8
 * positions: cl_fill_bytes() hashes every byte, too slow for a benchmark that
 * refills its buffers before every transfer. Host memory: "cpu" only. */
static uint64_t word_at(uint64_t seed, int owner, size_t w)
{
    return cl_data_hash(seed ^ ((uint64_t)owner << 56) ^ (w * 0x9e3779b97f4a7c15ull));
}

void fill(unsigned char *buf, size_t n, uint64_t seed, int owner, size_t first)
{
    for (size_t i = 0; i < n;) {
        size_t pos = first + i;
        uint64_t v = word_at(seed, owner, pos / 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (pos % 8 == 0 && n - i >= 8) {
            memcpy(buf + i, &v, 8);
            i += 8;
            continue;
        }
#endif
        for (size_t k = pos % 8; k < 8 && i < n; k++)
            buf[i++] = (unsigned char)(v >> (8 * k));
    }
}

size_t count_wrong(const unsigned char *buf, size_t n, uint64_t seed, int owner, size_t first)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n;) {
        size_t pos = first + i;
        uint64_t v = word_at(seed, owner, pos / 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (pos % 8 == 0 && n - i >= 8 && memcmp(buf + i, &v, 8) == 0) {
            i += 8;
            continue;
        }
#endif
        for (size_t k = pos % 8; k < 8 && i < n; k++)
            wrong += buf[i++] != (unsigned char)(v >> (8 * k));
    }
    return wrong;
}
