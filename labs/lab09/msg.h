/* msg.h: lab 09's test messages: sequence-numbered, checksummed, of any size. */
#ifndef COMMLAB_LAB09_MSG_H
#define COMMLAB_LAB09_MSG_H

#include <stddef.h>
#include <stdint.h>

/* Fill buf with message number seq of the stream `seed`: bytes [0, 8) hold seq,
 * the last 8 bytes a checksum of the rest, the middle pseudo-random bytes
 * (shorter messages are pseudo-random bytes only). This function can't fail. */
void lab09_msg_fill(unsigned char *buf, size_t bytes, uint64_t seq, uint64_t seed);

/* How buf compares with message seq: 0 intact, 1 another message (lost,
 * duplicated or reordered: its sequence number or checksum says so), 2 torn
 * (wrong bytes). This function can't fail. */
int lab09_msg_check(const unsigned char *buf, size_t bytes, uint64_t seq, uint64_t seed);

/* The size of message seq: a mix of 0, 1, chunk - 1, chunk, chunk + 1, exact
 * multiples of chunk and random sizes up to 6 chunks. This function can't fail. */
size_t lab09_msg_size(uint64_t seq, uint64_t seed, size_t chunk);

#endif /* COMMLAB_LAB09_MSG_H */
