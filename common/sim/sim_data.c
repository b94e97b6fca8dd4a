/* sim_data.c: segment lists that describe simulated buffers (see sim_data.h). */
#include "sim_data.h"

#include <stdlib.h>
#include <string.h>

#include "data.h"

#define KEPT_LIMIT ((size_t)1 << 30) /* bytes of uploads kept, all buffers together */

struct cl_sim_ranks {
    int refs;
    int n;    /* intervals */
    int iv[]; /* [lo0, hi0, lo1, hi1, ...], sorted, disjoint, not touching */
};

struct cl_sim_blob {
    int refs;
    size_t len;
    unsigned char b[];
};

static size_t kept;

size_t cl_sim_data_kept(void) { return kept; }

/* --- rank sets --------------------------------------------------------------------------- */

static cl_sim_ranks *ranks_alloc(int n)
{
    cl_sim_ranks *s = malloc(sizeof *s + (size_t)n * 2 * sizeof(int));
    if (s) {
        s->refs = 1;
        s->n = n;
    }
    return s;
}

static cl_sim_ranks *ranks_interval(int lo, int hi)
{
    cl_sim_ranks *s = ranks_alloc(1);
    if (s) {
        s->iv[0] = lo;
        s->iv[1] = hi;
    }
    return s;
}

static void ranks_unref(cl_sim_ranks *s)
{
    if (s && --s->refs == 0)
        free(s);
}

static int ranks_equal(const cl_sim_ranks *a, const cl_sim_ranks *b)
{
    return a == b || (a->n == b->n && memcmp(a->iv, b->iv, (size_t)a->n * 2 * sizeof(int)) == 0);
}

static int ranks_is(const cl_sim_ranks *a, int lo, int hi)
{
    return a->n == 1 && a->iv[0] == lo && a->iv[1] == hi;
}

/* a | b; *overlap = 1 when they share a rank. NULL when out of memory. */
static cl_sim_ranks *ranks_union(const cl_sim_ranks *a, const cl_sim_ranks *b, int *overlap)
{
    cl_sim_ranks *u = ranks_alloc(a->n + b->n);
    if (!u)
        return NULL;
    int i = 0, j = 0, k = 0;
    *overlap = 0;
    while (i < a->n || j < b->n) {
        const int *x;
        if (j >= b->n || (i < a->n && a->iv[2 * i] <= b->iv[2 * j]))
            x = &a->iv[2 * i++];
        else
            x = &b->iv[2 * j++];
        if (k > 0 && x[0] < u->iv[2 * k - 1])
            *overlap = 1;
        if (k > 0 && x[0] <= u->iv[2 * k - 1]) {
            if (x[1] > u->iv[2 * k - 1])
                u->iv[2 * k - 1] = x[1];
        } else {
            u->iv[2 * k] = x[0];
            u->iv[2 * k + 1] = x[1];
            k++;
        }
    }
    u->n = k;
    return u;
}

/* --- segments ---------------------------------------------------------------------------- */

static void seg_ref(cl_sim_seg *s)
{
    if (s->kind == CL_SIM_INPUT)
        s->ranks->refs++;
    else if (s->kind == CL_SIM_BYTES)
        s->blob->refs++;
}

static void seg_unref(cl_sim_seg *s)
{
    if (s->kind == CL_SIM_INPUT)
        ranks_unref(s->ranks);
    else if (s->kind == CL_SIM_BYTES && --s->blob->refs == 0) {
        kept -= s->blob->len;
        free(s->blob);
    }
    s->kind = CL_SIM_MIXED;
}

static void make_mixed(cl_sim_seg *s)
{
    seg_unref(s);
    s->kind = CL_SIM_MIXED;
}

/* Index of the segment that contains byte x (x < d->bytes). */
static int seg_at(const cl_sim_data *d, size_t x)
{
    int lo = 0, hi = d->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (d->s[mid].off <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int reserve(cl_sim_data *d, int extra)
{
    if (d->n + extra <= d->cap)
        return 0;
    int cap = d->cap ? d->cap : 4;
    while (cap < d->n + extra)
        cap *= 2;
    cl_sim_seg *q = realloc(d->s, (size_t)cap * sizeof *q);
    if (!q)
        return -1;
    d->s = q;
    d->cap = cap;
    return 0;
}

/* The part [a, b) of segment s (a, b inside it), with its own reference. An
 * INPUT part that does not start and end on element boundaries is MIXED. */
static cl_sim_seg clip(const cl_sim_seg *s, size_t a, size_t b)
{
    cl_sim_seg p = *s;
    size_t delta = a - s->off;
    p.off = a;
    p.len = b - a;
    if (p.kind == CL_SIM_INPUT) {
        if (delta % (size_t)p.es || p.len % (size_t)p.es) {
            p.kind = CL_SIM_MIXED;
            return p;
        }
        p.first += (int64_t)(delta / (size_t)p.es);
    } else if (p.kind == CL_SIM_BYTES) {
        p.boff += delta;
    }
    seg_ref(&p);
    return p;
}

/* Make x a segment boundary. An element of an INPUT segment that x cuts in
 * two becomes MIXED on both sides. */
static int split_at(cl_sim_data *d, size_t x)
{
    if (x == 0 || x >= d->bytes)
        return 0;
    int i = seg_at(d, x);
    cl_sim_seg s = d->s[i];
    if (s.off == x)
        return 0;
    size_t end = s.off + s.len, cuts[4];
    int nc = 0;
    cuts[nc++] = s.off;
    if (s.kind == CL_SIM_INPUT && (x - s.off) % (size_t)s.es) {
        size_t e0 = s.off + (x - s.off) / (size_t)s.es * (size_t)s.es;
        if (e0 > s.off)
            cuts[nc++] = e0;
        cuts[nc++] = x;
        if (e0 + (size_t)s.es < end)
            cuts[nc++] = e0 + (size_t)s.es;
    } else {
        cuts[nc++] = x;
    }
    if (reserve(d, nc - 1) != 0)
        return -1;
    cl_sim_seg parts[4];
    for (int k = 0; k < nc; k++)
        parts[k] = clip(&s, cuts[k], k + 1 < nc ? cuts[k + 1] : end);
    seg_unref(&d->s[i]);
    memmove(d->s + i + nc, d->s + i + 1, (size_t)(d->n - i - 1) * sizeof *d->s);
    memcpy(d->s + i, parts, (size_t)nc * sizeof *parts);
    d->n += nc - 1;
    return 0;
}

static int can_merge(const cl_sim_seg *a, const cl_sim_seg *b)
{
    if (a->kind != b->kind || a->off + a->len != b->off)
        return 0;
    switch (a->kind) {
    case CL_SIM_UNSET:
    case CL_SIM_MIXED: return 1;
    case CL_SIM_BYTES: return a->blob == b->blob && a->boff + a->len == b->boff;
    default:
        return a->es == b->es && a->dtype == b->dtype && a->op == b->op && a->seed == b->seed &&
               a->first + (int64_t)(a->len / (size_t)a->es) == b->first &&
               ranks_equal(a->ranks, b->ranks);
    }
}

/* Merge neighbours among segments lo..hi (clamped). */
static void coalesce(cl_sim_data *d, int lo, int hi)
{
    if (lo < 0)
        lo = 0;
    if (hi > d->n - 1)
        hi = d->n - 1;
    for (int i = hi; i > lo; i--)
        if (can_merge(&d->s[i - 1], &d->s[i])) {
            d->s[i - 1].len += d->s[i].len;
            seg_unref(&d->s[i]);
            memmove(d->s + i, d->s + i + 1, (size_t)(d->n - i - 1) * sizeof *d->s);
            d->n--;
        }
}

/* The pieces of d that cover [off, off + len), each with its own reference,
 * in a new array (*out, *n). */
static cl_result extract(const cl_sim_data *d, size_t off, size_t len, cl_sim_seg **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (len == 0)
        return CL_OK;
    int i0 = seg_at(d, off), i1 = seg_at(d, off + len - 1);
    cl_sim_seg *p = malloc((size_t)(i1 - i0 + 1) * sizeof *p);
    if (!p)
        return CL_ERR_NOMEM;
    for (int i = i0; i <= i1; i++) {
        const cl_sim_seg *s = &d->s[i];
        size_t a = s->off > off ? s->off : off;
        size_t b = s->off + s->len < off + len ? s->off + s->len : off + len;
        p[i - i0] = clip(s, a, b);
    }
    *out = p;
    *n = i1 - i0 + 1;
    return CL_OK;
}

static void release(cl_sim_seg *p, int n)
{
    for (int i = 0; i < n; i++)
        seg_unref(&p[i]);
    free(p);
}

/* Replace [off, off + len) of d by the pieces (which take their place in
 * order, starting at off; their lengths add up to len). Takes their references
 * and frees the array. */
static cl_result replace(cl_sim_data *d, size_t off, size_t len, cl_sim_seg *p, int np)
{
    if (split_at(d, off) != 0 || split_at(d, off + len) != 0 || reserve(d, np) != 0) {
        release(p, np);
        return CL_ERR_NOMEM;
    }
    int i0 = seg_at(d, off), i1 = off + len >= d->bytes ? d->n : seg_at(d, off + len);
    for (int i = i0; i < i1; i++)
        seg_unref(&d->s[i]);
    memmove(d->s + i0 + np, d->s + i1, (size_t)(d->n - i1) * sizeof *d->s);
    size_t at = off;
    for (int k = 0; k < np; k++) {
        p[k].off = at;
        at += p[k].len;
        d->s[i0 + k] = p[k];
    }
    d->n += np - (i1 - i0);
    free(p);
    coalesce(d, i0 - 1, i0 + np);
    return CL_OK;
}

static cl_result check_range(const cl_sim_data *d, size_t off, size_t len)
{
    if (off > d->bytes || len > d->bytes - off) {
        cl_set_error("sim: %zu bytes at offset %zu of a %zu-byte buffer", len, off, d->bytes);
        return CL_ERR_INVALID;
    }
    return CL_OK;
}

/* --- public ------------------------------------------------------------------------------ */

cl_result cl_sim_data_init(cl_sim_data *d, size_t bytes)
{
    *d = (cl_sim_data){.bytes = bytes};
    if (bytes == 0)
        return CL_OK;
    if (reserve(d, 1) != 0)
        return CL_ERR_NOMEM;
    d->s[0] = (cl_sim_seg){.off = 0, .len = bytes, .kind = CL_SIM_UNSET};
    d->n = 1;
    return CL_OK;
}

void cl_sim_data_free(cl_sim_data *d)
{
    for (int i = 0; i < d->n; i++)
        seg_unref(&d->s[i]);
    free(d->s);
    *d = (cl_sim_data){0};
}

static cl_result put_one(cl_sim_data *d, size_t off, cl_sim_seg s)
{
    CL_CHECK(check_range(d, off, s.len));
    if (s.len == 0) {
        seg_unref(&s);
        return CL_OK;
    }
    cl_sim_seg *p = malloc(sizeof *p);
    if (!p) {
        seg_unref(&s);
        return CL_ERR_NOMEM;
    }
    *p = s;
    return replace(d, off, s.len, p, 1);
}

cl_result cl_sim_data_fill(cl_sim_data *d, size_t off, size_t count, cl_dtype t, cl_op op,
                           uint64_t seed, int rank, int64_t first)
{
    size_t es = cl_dtype_size(t);
    cl_sim_ranks *r = ranks_interval(rank, rank + 1);
    if (!r)
        return CL_ERR_NOMEM;
    return put_one(d, off,
                   (cl_sim_seg){.len = count * es,
                                .kind = CL_SIM_INPUT,
                                .es = (int)es,
                                .dtype = t,
                                .op = op,
                                .seed = seed,
                                .first = first,
                                .ranks = r});
}

cl_result cl_sim_data_fill_raw(cl_sim_data *d, size_t off, size_t bytes, uint64_t seed, int rank,
                               int64_t first)
{
    cl_sim_ranks *r = ranks_interval(rank, rank + 1);
    if (!r)
        return CL_ERR_NOMEM;
    return put_one(d, off,
                   (cl_sim_seg){.len = bytes,
                                .kind = CL_SIM_INPUT,
                                .es = 1,
                                .dtype = -1,
                                .op = -1,
                                .seed = seed,
                                .first = first,
                                .ranks = r});
}

cl_result cl_sim_data_unset(cl_sim_data *d, size_t off, size_t bytes)
{
    return put_one(d, off, (cl_sim_seg){.len = bytes, .kind = CL_SIM_UNSET});
}

static cl_sim_blob *blob_new(size_t len)
{
    if (kept + len > KEPT_LIMIT) {
        cl_set_error("sim: more than %zu MiB uploaded from host memory are kept; the simulator "
                     "models device data, upload only small control data",
                     KEPT_LIMIT >> 20);
        return NULL;
    }
    cl_sim_blob *b = malloc(sizeof *b + (len ? len : 1));
    if (!b) {
        cl_set_error("sim: out of memory for %zu uploaded bytes", len);
        return NULL;
    }
    b->refs = 1;
    b->len = len;
    kept += len;
    return b;
}

cl_result cl_sim_data_write(cl_sim_data *d, size_t off, const void *src, size_t bytes)
{
    CL_CHECK(check_range(d, off, bytes));
    if (bytes == 0)
        return CL_OK;
    cl_sim_blob *b = blob_new(bytes);
    if (!b)
        return CL_ERR_NOMEM;
    memcpy(b->b, src, bytes);
    return put_one(d, off, (cl_sim_seg){.len = bytes, .kind = CL_SIM_BYTES, .blob = b});
}

/* The bytes segment s stands for, into dst (s->len bytes). */
static void materialize(const cl_sim_seg *s, unsigned char *dst)
{
    switch (s->kind) {
    case CL_SIM_UNSET: memset(dst, 0xab, s->len); return;
    case CL_SIM_MIXED: memset(dst, 0xcd, s->len); return;
    case CL_SIM_BYTES: memcpy(dst, s->blob->b + s->boff, s->len); return;
    default: break;
    }
    size_t n = s->len / (size_t)s->es;
    if (s->dtype < 0) {
        for (size_t k = 0; k < n; k++)
            dst[k] = cl_data_raw_byte(s->seed, s->ranks->iv[0], (size_t)(s->first + (int64_t)k));
        return;
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = (size_t)(s->first + (int64_t)k);
        int started = 0;
        double v = 0;
        for (int j = 0; j < s->ranks->n; j++)
            for (int r = s->ranks->iv[2 * j]; r < s->ranks->iv[2 * j + 1]; r++) {
                double x = cl_data_value(s->seed, (cl_op)s->op, r, i);
                v = started ? cl_data_combine(v, x, (cl_op)s->op) : x;
                started = 1;
            }
        cl_data_store(dst, k, (cl_dtype)s->dtype, v);
    }
}

cl_result cl_sim_data_read(const cl_sim_data *d, size_t off, void *dst, size_t bytes)
{
    CL_CHECK(check_range(d, off, bytes));
    cl_sim_seg *p;
    int n;
    CL_CHECK(extract(d, off, bytes, &p, &n));
    unsigned char *out = dst;
    for (int i = 0; i < n; i++) {
        materialize(&p[i], out);
        out += p[i].len;
    }
    release(p, n);
    return CL_OK;
}

cl_result cl_sim_data_copy(cl_sim_data *dst, size_t doff, const cl_sim_data *src, size_t soff,
                           size_t bytes)
{
    CL_CHECK(check_range(dst, doff, bytes));
    CL_CHECK(check_range(src, soff, bytes));
    if (bytes == 0)
        return CL_OK;
    cl_sim_seg *p;
    int n;
    CL_CHECK(extract(src, soff, bytes, &p, &n));
    return replace(dst, doff, bytes, p, n);
}

/* The result of reducing piece a (inout) with piece b (in), both `len` bytes
 * at element-aligned positions of a reduction of type t with op. */
static cl_result combine(const cl_sim_seg *a, const cl_sim_seg *b, size_t len, cl_dtype t, cl_op op,
                         cl_sim_seg *out)
{
    size_t es = cl_dtype_size(t);
    *out = (cl_sim_seg){.len = len, .kind = CL_SIM_MIXED};
    if (len % es || a->kind == CL_SIM_UNSET || a->kind == CL_SIM_MIXED || b->kind == CL_SIM_UNSET ||
        b->kind == CL_SIM_MIXED)
        return CL_OK;
    if (a->kind == CL_SIM_INPUT && b->kind == CL_SIM_INPUT) {
        if (a->es != (int)es || b->es != (int)es || a->dtype != (int)t || b->dtype != (int)t ||
            a->op != (int)op || b->op != (int)op || a->seed != b->seed || a->first != b->first)
            return CL_OK;
        int overlap;
        cl_sim_ranks *u = ranks_union(a->ranks, b->ranks, &overlap);
        if (!u)
            return CL_ERR_NOMEM;
        if (overlap && op != CL_MAX && op != CL_MIN) { /* a contribution counted twice */
            ranks_unref(u);
            return CL_OK;
        }
        *out = *a;
        out->len = len;
        out->ranks = u;
        return CL_OK;
    }
    /* Uploaded bytes are involved: compute the real values. */
    cl_sim_blob *r = blob_new(len);
    unsigned char *tmp = malloc(len);
    if (!r || !tmp) {
        free(tmp);
        if (r) {
            kept -= r->len;
            free(r);
        }
        return CL_ERR_NOMEM;
    }
    materialize(a, r->b);
    materialize(b, tmp);
    cl_reduce_host(r->b, tmp, len / es, t, op);
    free(tmp);
    *out = (cl_sim_seg){.len = len, .kind = CL_SIM_BYTES, .blob = r};
    return CL_OK;
}

cl_result cl_sim_data_reduce(cl_sim_data *inout, size_t ioff, const cl_sim_data *in, size_t inoff,
                             size_t count, cl_dtype t, cl_op op)
{
    size_t es = cl_dtype_size(t), len = count * es;
    CL_CHECK(check_range(inout, ioff, len));
    CL_CHECK(check_range(in, inoff, len));
    if (len == 0)
        return CL_OK;
    cl_sim_seg *a, *b, *res = NULL;
    int na, nb, nr = 0;
    CL_CHECK(extract(inout, ioff, len, &a, &na));
    cl_result rc = extract(in, inoff, len, &b, &nb);
    if (rc == CL_OK && !(res = malloc((size_t)(na + nb) * sizeof *res)))
        rc = CL_ERR_NOMEM;
    /* Walk both in reduction coordinates; cut at every boundary of either side. */
    size_t pos = 0;
    int i = 0, j = 0;
    while (rc == CL_OK && pos < len) {
        size_t ea = a[i].off - ioff + a[i].len, eb = b[j].off - inoff + b[j].len;
        size_t end = ea < eb ? ea : eb;
        cl_sim_seg pa = clip(&a[i], ioff + pos, ioff + end);
        cl_sim_seg pb = clip(&b[j], inoff + pos, inoff + end);
        /* An INPUT piece off the reduction's element grid cannot line up. */
        if (pos % es || (end - pos) % es) {
            make_mixed(&pa);
            make_mixed(&pb);
        }
        rc = combine(&pa, &pb, end - pos, t, op, &res[nr]);
        seg_unref(&pa);
        seg_unref(&pb);
        if (rc == CL_OK && nr > 0 && res[nr].kind == res[nr - 1].kind &&
            res[nr].kind == CL_SIM_MIXED)
            res[nr - 1].len += res[nr].len;
        else if (rc == CL_OK)
            nr++;
        pos = end;
        if (end == ea)
            i++;
        if (end == eb)
            j++;
    }
    release(a, na);
    if (b)
        release(b, nb);
    if (rc != CL_OK) {
        if (res)
            release(res, nr);
        return rc;
    }
    return replace(inout, ioff, len, res, nr);
}

cl_result cl_sim_data_wrong(const cl_sim_data *d, size_t off, size_t count, int t, cl_op op,
                            uint64_t seed, int lo, int hi, int64_t first, size_t *wrong)
{
    size_t es = t < 0 ? 1 : cl_dtype_size((cl_dtype)t), len = count * es;
    *wrong = 0;
    CL_CHECK(check_range(d, off, len));
    if (len == 0)
        return CL_OK;
    cl_sim_seg *p;
    int n;
    CL_CHECK(extract(d, off, len, &p, &n));
    size_t counted = 0; /* elements [0, counted) are already judged */
    unsigned char *want = NULL, *got = NULL;
    for (int i = 0; i < n; i++) {
        const cl_sim_seg *s = &p[i];
        size_t rel = s->off - off, e0 = rel / es, e1 = (rel + s->len + es - 1) / es;
        if (e0 < counted)
            e0 = counted;
        int good = s->kind == CL_SIM_INPUT && s->es == (int)es && s->dtype == t &&
                   (t < 0 || s->op == (int)op) && s->seed == seed && rel % es == 0 &&
                   s->len % es == 0 && s->first == first + (int64_t)(rel / es) &&
                   ranks_is(s->ranks, lo, hi);
        if (!good && s->kind == CL_SIM_BYTES && rel % es == 0 && s->len % es == 0) {
            /* compare uploaded bytes with the expected values */
            cl_sim_ranks *r = ranks_interval(lo, hi);
            want = realloc(want, s->len);
            got = realloc(got, s->len);
            if (!r || !want || !got) {
                ranks_unref(r);
                free(want), free(got), release(p, n);
                return CL_ERR_NOMEM;
            }
            cl_sim_seg e = {.len = s->len,
                            .kind = CL_SIM_INPUT,
                            .es = (int)es,
                            .dtype = t,
                            .op = op,
                            .seed = seed,
                            .first = first + (int64_t)(rel / es),
                            .ranks = r};
            materialize(&e, want);
            materialize(s, got);
            ranks_unref(r);
            for (size_t k = 0; k < s->len / es; k++)
                if (rel / es + k >= counted && memcmp(want + k * es, got + k * es, es) != 0)
                    (*wrong)++;
        } else if (!good && e1 > e0) {
            *wrong += e1 - e0;
        }
        if (e1 > counted)
            counted = e1;
    }
    free(want);
    free(got);
    release(p, n);
    return CL_OK;
}

cl_result cl_sim_data_touched(const cl_sim_data *d, size_t off, size_t bytes, size_t *n)
{
    *n = 0;
    CL_CHECK(check_range(d, off, bytes));
    if (bytes == 0)
        return CL_OK;
    for (int i = seg_at(d, off); i < d->n && d->s[i].off < off + bytes; i++) {
        size_t a = d->s[i].off > off ? d->s[i].off : off;
        size_t b =
            d->s[i].off + d->s[i].len < off + bytes ? d->s[i].off + d->s[i].len : off + bytes;
        if (d->s[i].kind != CL_SIM_UNSET)
            *n += b - a;
    }
    return CL_OK;
}
