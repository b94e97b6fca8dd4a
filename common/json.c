/* json.c: the streaming JSON writer. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static void fail(cl_json *j, cl_result rc, const char *why)
{
    if (j->error == CL_OK) {
        j->error = rc;
        cl_set_error("json: %s", why);
    }
}

void cl_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

static void write_string(cl_json *j, const char *s) { cl_json_write_string(j->out, s); }

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
    j->owns_out = false;
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

void cl_json_number_array(cl_json *j, const char *key, const double *values, size_t n)
{
    cl_json_array_start(j, key);
    for (size_t i = 0; i < n; i++)
        cl_json_number(j, NULL, values[i]);
    cl_json_array_end(j);
}

void cl_json_int_array(cl_json *j, const char *key, const long long *values, size_t n)
{
    cl_json_array_start(j, key);
    for (size_t i = 0; i < n; i++)
        cl_json_int(j, NULL, values[i]);
    cl_json_array_end(j);
}

cl_result cl_json_open(cl_json *j, const char *path)
{
    if (!path || strcmp(path, "-") == 0) {
        cl_json_begin(j, stdout);
        return CL_OK;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        cl_set_error("cannot write %s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    cl_json_begin(j, f);
    j->owns_out = true;
    return CL_OK;
}

cl_result cl_json_close(cl_json *j)
{
    cl_result rc = cl_json_end(j);
    if (j->owns_out && fclose(j->out) != 0 && rc == CL_OK) {
        cl_set_error("json: closing the output failed");
        rc = CL_ERR_IO;
    }
    j->owns_out = false;
    return rc;
}
