/* fuzz_sim_system.c: libFuzzer target for cl_sim_system_parse (the systems .conf files).
 * The parser takes a path, so each input is handed over as /proc/self/fd/N of a
 * memfd: no file is written to disk. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "sim/sim_system.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cl_sim_system sys;
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-conf", 0);
        if (fd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    cl_clear_error();
    cl_result rc = cl_sim_system_parse(path, &sys);
    fuzz_expect_located(rc, path);
    if (rc == CL_OK && (sys.nodes < 1 || sys.gpus_per_node < 1))
        abort();
    return 0;
}
