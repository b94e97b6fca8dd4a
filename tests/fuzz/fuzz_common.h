/* fuzz_common.h: helpers shared by the libFuzzer targets of CommLab's parsers.
 *
 * Every target feeds the fuzzer's bytes to one parser and checks the parser's
 * contract: it returns CL_OK, or a failure whose reason (cl_last_error()) is
 * "PATH:LINE: reason" for malformed input. Anything else aborts, so the
 * fuzzer records the input as a finding.
 */
#ifndef COMMLAB_FUZZ_COMMON_H
#define COMMLAB_FUZZ_COMMON_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

/* Abort unless a failure with code rc names the input by "path:LINE: reason". */
static inline void fuzz_expect_located(cl_result rc, const char *path)
{
    if (rc == CL_OK || rc == CL_ERR_NOMEM)
        return;
    const char *e = cl_last_error();
    size_t n = strlen(path);
    const char *p = e + n;
    int ok = strncmp(e, path, n) == 0 && *p == ':' && isdigit((unsigned char)p[1]);
    if (ok) {
        p++;
        while (isdigit((unsigned char)*p))
            p++;
        ok = p[0] == ':' && p[1] == ' ' && p[2] != 0;
    }
    if (rc != CL_ERR_PARSE || !ok) {
        fprintf(stderr, "parser contract broken: %s, reason '%s' (want CL_ERR_PARSE and "
                        "'%s:LINE: reason')\n", cl_result_str(rc), e, path);
        abort();
    }
}

#endif /* COMMLAB_FUZZ_COMMON_H */
