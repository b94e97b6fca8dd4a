/* race.c: lab 09's race detector: the student's ring between two threads under ThreadSanitizer.
 *
 * Built by labs/lab09/lab.mk with -fsanitize=thread next to the lab binary as
 * lab09-race. Two threads send each other sequence-numbered messages of random
 * sizes through two small rings in ordinary memory, exactly as two processes do
 * through shared memory. ThreadSanitizer follows C11 acquire/release: a payload
 * published with a relaxed store, or read before the acquire load of head,
 * is reported as a data race (exit status 66). Exit 1 for wrong data, 0 when
 * clean; killed by SIGALRM after 30 s (a deadlock). Usage: lab09-race [messages]
 */
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab09.h"
#include "msg.h"

#define NSLOTS 4
#define CHUNK 200

typedef struct side {
    int id;
    int messages;
    lab09_ring *tx, *rx;
    long bad;
    cl_result rc;
} side;

static void *run(void *arg)
{
    side *s = arg;
    unsigned char *out = malloc(6 * CHUNK + 64), *in = malloc(6 * CHUNK + 64);
    if (!out || !in) {
        s->rc = CL_ERR_NOMEM;
        return NULL;
    }
    for (int k = 0; k < s->messages; k++) {
        size_t sb = lab09_msg_size((uint64_t)k, 100 + (uint64_t)s->id, CHUNK);
        size_t rb = lab09_msg_size((uint64_t)k, 101 - (uint64_t)s->id, CHUNK);
        lab09_msg_fill(out, sb, (uint64_t)k, 100 + (uint64_t)s->id);
        s->rc = lab09_sendrecv(s->tx, out, sb, s->rx, in, rb);
        if (s->rc != CL_OK)
            break;
        s->bad += lab09_msg_check(in, rb, (uint64_t)k, 101 - (uint64_t)s->id) != 0;
    }
    free(out);
    free(in);
    return NULL;
}

int main(int argc, char **argv)
{
    int messages = argc > 1 ? atoi(argv[1]) : 3000;
    alarm(30); /* a deadlock ends here, killed by SIGALRM */
    size_t bytes = lab09_ring_bytes(NSLOTS, CHUNK);
    void *mem[2];
    lab09_ring ring[2];
    for (int i = 0; i < 2; i++) {
        mem[i] = aligned_alloc(LAB09_LINE, (bytes + LAB09_LINE - 1) / LAB09_LINE * LAB09_LINE);
        if (!mem[i])
            return 2;
        memset(mem[i], 0, bytes);
        lab09_ring_map(&ring[i], mem[i], NSLOTS, CHUNK);
        lab09_ring_reset(&ring[i], UINT64_MAX - 5);
    }
    side s[2] = {{.id = 0, .messages = messages, .tx = &ring[0], .rx = &ring[1]},
                 {.id = 1, .messages = messages, .tx = &ring[1], .rx = &ring[0]}};
    pthread_t t;
    if (pthread_create(&t, NULL, run, &s[1]) != 0)
        return 2;
    run(&s[0]);
    pthread_join(t, NULL);
    for (int i = 0; i < 2; i++)
        free(mem[i]);
    for (int i = 0; i < 2; i++)
        if (s[i].rc != CL_OK) {
            printf("lab09-race: thread %d: %s: %s\n", i, cl_result_str(s[i].rc), cl_last_error());
            return 1;
        }
    printf("lab09-race: %d messages each way, %ld wrong\n", messages, s[0].bad + s[1].bad);
    return s[0].bad + s[1].bad ? 1 : 0;
}
