/* result.h: the one error convention of CommLab.
 *
 * Every library function that can fail returns a cl_result. CL_OK is zero,
 * failures are positive. Functions never call exit(): only main() turns a
 * cl_result into an exit status (see cl_exit_status()).
 *
 * CL_CHECK(expr) evaluates expr and, when it fails, prints "file:line: expr:
 * reason" on stderr and returns the code from the calling function, in the
 * style of nccl-tests' NCCLCHECK.
 *
 * A function that fails for a reason worth telling the user (a malformed
 * line, a missing device) records the reason with cl_set_error(); the text
 * is read back with cl_last_error(). Parsers record "file:line: reason".
 */
#ifndef COMMLAB_RESULT_H
#define COMMLAB_RESULT_H

typedef enum cl_result {
    CL_OK = 0,
    CL_ERR_INVALID,         /* bad argument or bad input data */
    CL_ERR_PARSE,           /* malformed input file; reason is "file:line: ..." */
    CL_ERR_IO,              /* open/read/write failed */
    CL_ERR_NOMEM,           /* allocation failed */
    CL_ERR_UNSUPPORTED,     /* this build or machine cannot do it (no GPU, no NCCL) */
    CL_ERR_NOT_IMPLEMENTED, /* a TODO that the student has not written yet */
    CL_ERR_BACKEND,         /* MPI, CUDA, NCCL or the simulator reported an error */
    CL_ERR_MISMATCH,        /* verification found wrong data */
    CL_ERR_TIMEOUT,         /* an operation did not complete in time */
    CL_ERR_FORBIDDEN,       /* an operation the lab does not allow in this function */
    CL_ERR_CRASHED          /* the student's program died (signal, forbidden system call) */
} cl_result;

/* A short English description of rc. This function can't fail. */
const char *cl_result_str(cl_result rc);

/* Record a printf-style reason for the failure being returned.
 * Per thread, so simulated ranks running as threads do not mix messages. */
void cl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last reason recorded by cl_set_error() in this thread, or "" if none. */
const char *cl_last_error(void);

/* Forget the recorded reason. */
void cl_clear_error(void);

/* Print "file:line: what: reason" on stderr (used by CL_CHECK). */
void cl_report_failure(const char *file, int line, const char *what, cl_result rc);

/* Exit status for main(): 0 for CL_OK, 2 for bad input (CL_ERR_INVALID,
 * CL_ERR_PARSE), 3 for CL_ERR_TIMEOUT, 4 for CL_ERR_UNSUPPORTED (the grader
 * reports that as skipped, never as failed), 1 for the rest. */
int cl_exit_status(cl_result rc);

#define CL_EXIT_TIMEOUT     3
#define CL_EXIT_UNSUPPORTED 4

#define CL_CHECK(expr)                                                                             \
    do {                                                                                           \
        cl_result cl_check_rc_ = (expr);                                                           \
        if (cl_check_rc_ != CL_OK) {                                                               \
            cl_report_failure(__FILE__, __LINE__, #expr, cl_check_rc_);                            \
            return cl_check_rc_;                                                                   \
        }                                                                                          \
    } while (0)

/* The one cleanup idiom, for functions that own resources: declare
 * `cl_result rc = CL_OK;`, use CL_TRY instead of CL_CHECK, and release
 * everything after a `done:` label, whatever happened:
 *
 *     cl_result rc = CL_OK;
 *     void *buf = NULL;
 *     CL_TRY(cl_mem_alloc(c, n, &buf));
 *     CL_TRY(fill(buf));
 * done:
 *     cl_mem_free(c, buf);
 *     return rc;
 */
#define CL_TRY(expr)                                                                               \
    do {                                                                                           \
        rc = (expr);                                                                               \
        if (rc != CL_OK) {                                                                         \
            cl_report_failure(__FILE__, __LINE__, #expr, rc);                                      \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* Conditions that should never happen: true in release builds, loud in tests.
 * Use as: if (CL_NEVER(n < 0)) return CL_ERR_INVALID; */
#define CL_NEVER(cond) (cond)

#endif /* COMMLAB_RESULT_H */
