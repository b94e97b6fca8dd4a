/* result.c: error codes, the per-thread error reason, and CL_CHECK's report. */
#include "result.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

const char *cl_result_str(cl_result rc)
{
    switch (rc) {
    case CL_OK: return "success";
    case CL_ERR_INVALID: return "invalid argument";
    case CL_ERR_PARSE: return "malformed input";
    case CL_ERR_IO: return "input/output error";
    case CL_ERR_NOMEM: return "out of memory";
    case CL_ERR_UNSUPPORTED: return "not supported here";
    case CL_ERR_NOT_IMPLEMENTED: return "not implemented (TODO)";
    case CL_ERR_BACKEND: return "backend error";
    case CL_ERR_MISMATCH: return "wrong result";
    case CL_ERR_TIMEOUT: return "timed out";
    case CL_ERR_FORBIDDEN: return "not allowed here";
    case CL_ERR_CRASHED: return "crashed";
    }
    return "unknown error";
}

void cl_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

const char *cl_last_error(void) { return last_error; }

void cl_clear_error(void) { last_error[0] = '\0'; }

void cl_report_failure(const char *file, int line, const char *what, cl_result rc)
{
    if (last_error[0])
        fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, what, cl_result_str(rc), last_error);
    else
        fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cl_result_str(rc));
}

int cl_exit_status(cl_result rc)
{
    switch (rc) {
    case CL_OK: return 0;
    case CL_ERR_INVALID:
    case CL_ERR_PARSE: return 2;
    case CL_ERR_TIMEOUT: return CL_EXIT_TIMEOUT;
    case CL_ERR_UNSUPPORTED: return CL_EXIT_UNSUPPORTED;
    default: return 1;
    }
}
