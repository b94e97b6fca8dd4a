/* json.c: the streaming JSON writer. */
#include "json.h"

#include <math.h>

static void fail(cl_json *j, cl_result rc, const char *why)
{
    if (j->error == CL_OK) {
        j->error = rc;
        cl_set_error("json: %s", why);
    }
}

static void write_string(cl_json *j, const char *s)
{
    fputc('"', j->out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", j->out); break;
        case '\\': fputs("\\\\", j->out); break;
        case '\n': fputs("\\n", j->out); break;
        case '\t': fputs("\\t", j->out); break;
        case '\r': fputs("\\r", j->out); break;
        default:
            if (*p < 0x20)
                fprintf(j->out, "\\u%04x", *p);
            else
                fputc(*p, j->out);
        }
    }
    fputc('"', j->out);
}

/* Write the separator and key that precede a value at the current level. */
static void prefix(cl_json *j, const char *key)
{
    if (j->depth == 0) {
        if (key)
            fail(j, CL_ERR_INVALID, "key at top level");
        return;
    }
    int d = j->depth - 1;
    if (!j->first[d])
        fputc(',', j->out);
    j->first[d] = false;
    if (j->is_object[d]) {
        if (!key) {
            fail(j, CL_ERR_INVALID, "value without a key inside an object");
            key = "";
        }
        write_string(j, key);
        fputc(':', j->out);
    } else if (key) {
        fail(j, CL_ERR_INVALID, "key inside an array");
    }
}

static void open_level(cl_json *j, const char *key, bool object)
{
    prefix(j, key);
    if (j->depth == CL_JSON_MAX_DEPTH) {
        fail(j, CL_ERR_INVALID, "nesting too deep");
        return;
    }
    fputc(object ? '{' : '[', j->out);
    j->first[j->depth] = true;
    j->is_object[j->depth] = object;
    j->depth++;
}

static void close_level(cl_json *j, bool object)
{
    if (j->depth == 0 || j->is_object[j->depth - 1] != object) {
        fail(j, CL_ERR_INVALID, "unbalanced end");
        return;
    }
    j->depth--;
    fputc(object ? '}' : ']', j->out);
}

void cl_json_begin(cl_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->error = CL_OK;
}

void cl_json_object_start(cl_json *j, const char *key) { open_level(j, key, true); }
void cl_json_object_end(cl_json *j) { close_level(j, true); }
void cl_json_array_start(cl_json *j, const char *key) { open_level(j, key, false); }
void cl_json_array_end(cl_json *j) { close_level(j, false); }

void cl_json_string(cl_json *j, const char *key, const char *value)
{
    prefix(j, key);
    if (value)
        write_string(j, value);
    else
        fputs("null", j->out);
}

void cl_json_number(cl_json *j, const char *key, double value)
{
    prefix(j, key);
    if (isfinite(value))
        fprintf(j->out, "%.17g", value);
    else
        fputs("null", j->out);
}

void cl_json_int(cl_json *j, const char *key, long long value)
{
    prefix(j, key);
    fprintf(j->out, "%lld", value);
}

void cl_json_bool(cl_json *j, const char *key, bool value)
{
    prefix(j, key);
    fputs(value ? "true" : "false", j->out);
}

void cl_json_null(cl_json *j, const char *key)
{
    prefix(j, key);
    fputs("null", j->out);
}

cl_result cl_json_end(cl_json *j)
{
    if (j->depth != 0)
        fail(j, CL_ERR_INVALID, "unclosed object or array");
    fputc('\n', j->out);
    if (fflush(j->out) != 0 || ferror(j->out))
        fail(j, CL_ERR_IO, "write failed");
    return j->error;
}
