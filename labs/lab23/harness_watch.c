/* harness_watch.c: what the harness sees of the student's program: the buffers a rank holds
 * (the harness's record of every cl_mem_alloc), the program's own memory (RssAnon, read from
 * /proc, where malloc and static arrays cannot hide activations). The bytes a rank sent are
 * cl_student_sent_bytes()'s (boundary.h).
 */
#include <stdio.h>
#include <string.h>

#include "boundary/inspect.h"
#include "buffers.h"
#include "harness_ref.h"

static void add_buffer(const cl_buffer *b, void *arg)
{
    buffer_set *s = arg;
    if (s->n < MAX_BUFFERS) {
        s->base[s->n] = b->base;
        s->bytes[s->n++] = b->bytes;
    } else {
        s->overflow = 1;
    }
}

/* The rank's buffers now. */
void buffers_now(const cl_comm *c, buffer_set *s)
{
    memset(s, 0, sizeof *s);
    cl_buffers_each(cl_comm_rank(c), add_buffer, s); /* the world: one rank per process */
}

/* Buffers of now that are not in before: bytes, count. */
void buffers_new(const buffer_set *before, const buffer_set *now, double *bytes, int *n)
{
    *bytes = 0, *n = 0;
    for (int i = 0; i < now->n; i++) {
        int old = 0;
        for (int j = 0; j < before->n && !old; j++)
            old = before->base[j] == now->base[i];
        if (!old)
            *bytes += (double)now->bytes[i], (*n)++;
    }
}

/* Free what the student's program left allocated (a leak is reported, not kept). */
void buffers_drop_new(cl_comm *c, const buffer_set *before)
{
    buffer_set now;
    buffers_now(c, &now);
    for (int i = 0; i < now.n; i++) {
        int old = 0;
        for (int j = 0; j < before->n && !old; j++)
            old = before->base[j] == now.base[i];
        if (!old)
            cl_mem_free(c, (void *)now.base[i]);
    }
}

/* Private anonymous memory of the student's program (RssAnon), KiB; -1 if unknown. */
double anon_kib(void)
{
    pid_t pid = cl_student_pid();
    char path[64], line[256];
    double kib = -1;
    if (pid <= 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %lf", &kib) == 1)
            break;
    fclose(f);
    return kib;
}
