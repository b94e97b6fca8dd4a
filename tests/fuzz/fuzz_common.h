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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "topo.h"

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
        fprintf(stderr,
                "parser contract broken: %s, reason '%s' (want CL_ERR_PARSE and "
                "'%s:LINE: reason')\n",
                cl_result_str(rc), e, path);
        abort();
    }
}

typedef cl_result (*fuzz_topo_parser)(FILE *f, const char *path, cl_topo *out);

/* Feed data to a topology parser; check its contract, the invariants of
 * topo.h on success, and that the result can be written as JSON. */
static inline int fuzz_topo(fuzz_topo_parser parse, const char *path, const uint8_t *data,
                            size_t size)
{
    static cl_topo topo;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    cl_clear_error();
    cl_result rc = parse(f, path, &topo);
    fclose(f);
    fuzz_expect_located(rc, path);
    if (rc != CL_OK)
        return 0;
    if (topo.ndevices < 0 || topo.ndevices > CL_TOPO_MAX_DEVICES)
        abort();
    for (int i = 0; i < topo.ndevices; i++)
        for (int j = 0; j < topo.ndevices; j++)
            if ((topo.link[i][j].kind == CL_LINK_SELF) != (i == j))
                abort();
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        cl_topo_write_json(&topo, null);
        fclose(null);
    }
    return 0;
}

#endif /* COMMLAB_FUZZ_COMMON_H */
