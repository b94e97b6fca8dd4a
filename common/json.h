/* json.h: a small streaming JSON writer for results that graders read.
 *
 * The writer tracks nesting and commas; the caller only says what comes next:
 *
 *   cl_json j; cl_json_begin(&j, stdout);
 *   cl_json_object_start(&j, NULL);
 *   cl_json_number(&j, "alpha_us", 1.5);
 *   cl_json_array_start(&j, "sizes"); cl_json_number(&j, NULL, 8); cl_json_array_end(&j);
 *   cl_json_object_end(&j);
 *   cl_result rc = cl_json_end(&j);
 *
 * Inside an object every value needs a key; inside an array keys are NULL.
 * Errors (a key where none belongs, unbalanced ends, a failed write) are
 * remembered and reported once by cl_json_end(). Non-finite numbers are
 * written as null, since JSON has no NaN.
 */
#ifndef COMMLAB_JSON_H
#define COMMLAB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "result.h"

#define CL_JSON_MAX_DEPTH 32

typedef struct cl_json {
    FILE *out;
    bool owns_out; /* opened by cl_json_open(): closed by cl_json_close() */
    int depth;
    bool first[CL_JSON_MAX_DEPTH];     /* no element written yet at this level */
    bool is_object[CL_JSON_MAX_DEPTH]; /* level is an object (else an array) */
    cl_result error;                   /* first error seen, CL_OK if none */
} cl_json;

void cl_json_begin(cl_json *j, FILE *out);
void cl_json_object_start(cl_json *j, const char *key);
void cl_json_object_end(cl_json *j);
void cl_json_array_start(cl_json *j, const char *key);
void cl_json_array_end(cl_json *j);
void cl_json_string(cl_json *j, const char *key, const char *value); /* NULL value -> null */
void cl_json_number(cl_json *j, const char *key, double value);
void cl_json_int(cl_json *j, const char *key, long long value);
void cl_json_bool(cl_json *j, const char *key, bool value);
void cl_json_null(cl_json *j, const char *key);

/* Write s as a quoted, escaped JSON string literal, for writers that lay out
 * their own JSON (cl_topo_write_json). This function can't fail. */
void cl_json_write_string(FILE *out, const char *s);

/* An array of n numbers, or of n integers. */
void cl_json_number_array(cl_json *j, const char *key, const double *values, size_t n);
void cl_json_int_array(cl_json *j, const char *key, const long long *values, size_t n);

/* Finish: CL_OK, or the first error (CL_ERR_INVALID for misuse, CL_ERR_IO
 * for a failed write), with a reason in cl_last_error(). */
cl_result cl_json_end(cl_json *j);

/* Start a document written to path ("-" or NULL: standard output). Returns
 * CL_ERR_IO with the reason when the file cannot be created. */
cl_result cl_json_open(cl_json *j, const char *path);

/* cl_json_end() and close the file opened by cl_json_open(). */
cl_result cl_json_close(cl_json *j);

#endif /* COMMLAB_JSON_H */
