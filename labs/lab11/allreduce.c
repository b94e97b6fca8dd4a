/* allreduce.c: lab 11's given code: a non-blocking ring AllReduce on several channels.
 *
 * The ring of lab 05 (2(p-1) steps: reduce-scatter, then all-gather), with
 * every block cut into one slice per channel and every slice moved in pieces
 * of at most `slot` floats. All channels move one piece each at the same time
 * (a round): both neighbours post the same messages in the same order, so they
 * match, and a channel has one send and one receive in flight at most. Nothing
 * here blocks but lab11_ar_finish(): the caller decides when to make progress.
 */
#include "lab11.h"

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* Pieces per channel and step: those of the largest slice. */
static size_t pieces(const lab11_allreduce *ar)
{
    size_t block = ceil_div(ar->count, (size_t)ar->ranks);
    return ceil_div(ceil_div(block, (size_t)ar->channels), ar->slot);
}

/* Elements [*off, *off + *len) of piece `piece` of channel ch's slice of block b. */
static void piece_of(const lab11_allreduce *ar, int b, int ch, size_t piece, size_t *off,
                     size_t *len)
{
    size_t boff, blen, soff, slen;
    cl_coll_block(ar->count, ar->ranks, b, &boff, &blen);
    cl_coll_block(blen, ar->channels, ch, &soff, &slen);
    size_t at = piece * ar->slot;
    *off = boff + soff + at;
    *len = at >= slen ? 0 : slen - at < ar->slot ? slen - at : ar->slot;
}

static int mod(int a, int p) { return ((a % p) + p) % p; }

/* Post the current round: for every channel, receive from the left, send right. */
static cl_result post_round(lab11_allreduce *ar)
{
    int p = ar->ranks, r = ar->rank, rs = ar->step < p - 1;
    int t = rs ? ar->step : ar->step - (p - 1);
    int send_b = rs ? mod(r - t, p) : mod(r + 1 - t, p);
    int recv_b = rs ? mod(r - t - 1, p) : mod(r - t, p);
    ar->in_flight = 0;
    double bytes = 0;
    for (int ch = 0; ch < ar->channels; ch++) {
        size_t soff, slen;
        piece_of(ar, send_b, ch, ar->piece, &soff, &slen);
        piece_of(ar, recv_b, ch, ar->piece, &ar->off[ch], &ar->len[ch]);
        if (ar->len[ch]) {
            float *into = rs ? ar->scratch + (size_t)ch * ar->slot : ar->buf + ar->off[ch];
            CL_CHECK(cl_irecv(ar->comm, into, ar->len[ch] * sizeof(float), mod(r - 1, p),
                              &ar->req[ar->in_flight++]));
        }
        if (slen)
            CL_CHECK(cl_isend(ar->comm, ar->buf + soff, slen * sizeof(float), mod(r + 1, p),
                              &ar->req[ar->in_flight++]));
        bytes += (double)slen * sizeof(float);
    }
    ar->due = cl_comm_time(ar->comm) + ar->alpha_s + bytes / ar->link_Bps;
    return CL_OK;
}

/* The round is over: reduce what came in, go to the next round or finish. */
static cl_result next_round(lab11_allreduce *ar)
{
    int p = ar->ranks;
    if (ar->step < p - 1)
        for (int ch = 0; ch < ar->channels; ch++)
            if (ar->len[ch])
                CL_CHECK(cl_reduce_local(ar->comm, ar->buf + ar->off[ch],
                                         ar->scratch + (size_t)ch * ar->slot, ar->len[ch],
                                         CL_FLOAT32, CL_SUM));
    if (++ar->piece == pieces(ar)) {
        ar->piece = 0;
        if (++ar->step == 2 * (p - 1)) {
            ar->done = 1;
            return CL_OK;
        }
    }
    return post_round(ar);
}

cl_result lab11_ar_start(lab11_allreduce *ar, cl_comm *c, const lab11_model *m, float *buf,
                         float *scratch, size_t count, int channels, size_t slot)
{
    if (channels < 1 || channels > LAB11_MAX_CHANNELS || slot < 1) {
        cl_set_error("AllReduce on %d channels of %zu floats (1..%d channels)", channels, slot,
                     LAB11_MAX_CHANNELS);
        return CL_ERR_INVALID;
    }
    *ar = (lab11_allreduce){.comm = c,
                            .buf = buf,
                            .scratch = scratch,
                            .count = count,
                            .slot = slot,
                            .channels = channels,
                            .rank = cl_comm_rank(c),
                            .ranks = cl_comm_size(c),
                            .alpha_s = m->alpha_s,
                            .link_Bps = m->link_Bps > 0 ? m->link_Bps : 1e12};
    if (ar->ranks == 1 || count == 0) {
        ar->done = 1;
        return CL_OK;
    }
    return post_round(ar);
}

cl_result lab11_ar_progress(lab11_allreduce *ar, int *done)
{
    if (!ar->done && cl_comm_time(ar->comm) >= ar->due) {
        for (int i = 0; i < ar->in_flight; i++) {
            if (ar->req[i].id == 0)
                continue;
            int fin = 0;
            CL_CHECK(cl_test(ar->comm, &ar->req[i], &fin));
            if (!fin) { /* the rest of the round went out with it: ask again later */
                *done = 0;
                return CL_OK;
            }
        }
        CL_CHECK(next_round(ar)); /* the new round is tested at the next call */
    }
    *done = ar->done;
    return CL_OK;
}

cl_result lab11_ar_finish(lab11_allreduce *ar)
{
    while (!ar->done) {
        CL_CHECK(cl_waitall(ar->comm, ar->in_flight, ar->req));
        CL_CHECK(next_round(ar));
    }
    return CL_OK;
}
