/* buffers.c: a sorted table of the buffers handed out, looked up by binary search. */
#include "buffers.h"

#include <stdlib.h>
#include <string.h>

static cl_buffer *table;
static size_t count, cap;
static uintptr_t next_handle = CL_HANDLE_BASE;

/* Index of the first buffer whose base is > addr. */
static size_t upper(uintptr_t addr)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

cl_result cl_buffers_add(uintptr_t base, size_t bytes, int owner, void *impl)
{
    size_t i = upper(base);
    if ((i > 0 && table[i - 1].base + table[i - 1].bytes > base) ||
        (i < count && base + bytes > table[i].base)) {
        cl_set_error("buffer at %#lx of %zu bytes overlaps another", (unsigned long)base, bytes);
        return CL_ERR_INVALID;
    }
    if (count == cap) {
        size_t nc = cap ? 2 * cap : 64;
        cl_buffer *t = realloc(table, nc * sizeof *t);
        if (!t)
            return CL_ERR_NOMEM;
        table = t;
        cap = nc;
    }
    memmove(table + i + 1, table + i, (count - i) * sizeof *table);
    table[i] = (cl_buffer){.base = base, .bytes = bytes, .owner = owner, .impl = impl};
    count++;
    return CL_OK;
}

cl_result cl_buffers_remove(uintptr_t base, cl_buffer *out)
{
    size_t i = upper(base);
    if (i == 0 || table[i - 1].base != base) {
        cl_set_error("cl_mem_free(%p): not a buffer from cl_mem_alloc (or freed twice)",
                     (void *)base);
        return CL_ERR_INVALID;
    }
    if (out)
        *out = table[i - 1];
    memmove(table + i - 1, table + i, (count - i) * sizeof *table);
    count--;
    return CL_OK;
}

const cl_buffer *cl_buffers_find(const void *p, size_t bytes, int owner, const char *what)
{
    uintptr_t a = (uintptr_t)p;
    size_t i = upper(a);
    const cl_buffer *b = i > 0 ? &table[i - 1] : NULL;
    if (!b || a > b->base + b->bytes || (a == b->base + b->bytes && bytes > 0)) {
        cl_set_error("%s: %p is not inside a buffer from cl_mem_alloc", what, p);
        return NULL;
    }
    if (bytes > b->bytes - (a - b->base)) {
        cl_set_error("%s: %zu bytes at offset %zu run past the end of a %zu-byte buffer", what,
                     bytes, (size_t)(a - b->base), b->bytes);
        return NULL;
    }
    if (owner >= 0 && b->owner != owner) {
        cl_set_error("%s: the buffer at %p belongs to rank %d, not to rank %d", what, p, b->owner,
                     owner);
        return NULL;
    }
    return b;
}

uintptr_t cl_handles_take(size_t bytes)
{
    size_t span = (bytes + 4095) / 4096 * 4096 + 4096; /* a gap page between buffers */
    if (next_handle + span > CL_HANDLE_BASE + CL_HANDLE_SPAN)
        next_handle = CL_HANDLE_BASE; /* wrap: old handles are long freed, or checked below */
    for (size_t tries = 0; tries < count + 2; tries++) {
        uintptr_t h = next_handle;
        size_t i = upper(h);
        const cl_buffer *in_way = NULL;
        if (i > 0 && table[i - 1].base + table[i - 1].bytes > h)
            in_way = &table[i - 1];
        else if (i < count && h + span > table[i].base)
            in_way = &table[i];
        if (!in_way) {
            next_handle = h + span;
            return h;
        }
        next_handle = in_way->base + (in_way->bytes + 4095) / 4096 * 4096 + 4096;
        if (next_handle + span > CL_HANDLE_BASE + CL_HANDLE_SPAN)
            return 0;
    }
    return 0;
}

void cl_buffers_each(int owner, void (*fn)(const cl_buffer *b, void *arg), void *arg)
{
    for (size_t i = 0; i < count; i++)
        if (table[i].owner == owner)
            fn(&table[i], arg);
}

void cl_buffers_release_all(int owner, void (*release)(const cl_buffer *b))
{
    size_t w = 0;
    for (size_t i = 0; i < count; i++) {
        if (owner < 0 || table[i].owner == owner) {
            if (release)
                release(&table[i]);
        } else {
            table[w++] = table[i];
        }
    }
    count = w;
}

size_t cl_buffers_count(void) { return count; }
