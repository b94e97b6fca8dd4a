/* region.c: memory the ranks' student programs share, at the same address in every process. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boundary/wire.h"
#include "run.h"
#include "shm.h"

static void *mapped; /* this process's mapping, once made */
static size_t mapped_bytes;

static cl_result map_here(int fd, size_t bytes)
{
    void *p = mmap((void *)CL_REGION_BASE, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_POPULATE, fd, 0);
    if (p != (void *)CL_REGION_BASE) {
        cl_set_error("cannot map the shared region at %p: %s", (void *)CL_REGION_BASE,
                     p == MAP_FAILED ? strerror(errno) : "another address");
        if (p != MAP_FAILED)
            munmap(p, bytes);
        return CL_ERR_IO;
    }
    mapped = p;
    mapped_bytes = bytes;
    return cl_student_region(fd, p, bytes);
}

cl_result cl_shared_region(cl_comm *comm, size_t bytes, void **base)
{
    *base = NULL;
    if (mapped) { /* "sim": every simulated rank asks; the first one made it */
        if (bytes != mapped_bytes) {
            cl_set_error("the shared region exists with %zu bytes, not %zu", mapped_bytes, bytes);
            return CL_ERR_INVALID;
        }
        *base = mapped;
        return CL_OK;
    }
    cl_result rc;
    if (cl_comm_on_sim(comm)) {
        int fd = memfd_create("commlab-region", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
            cl_set_error("cannot create a shared region of %zu bytes: %s", bytes, strerror(errno));
            if (fd >= 0)
                close(fd);
            return CL_ERR_IO;
        }
        rc = map_here(fd, bytes);
        close(fd);
    } else {
        cl_shm shm;
        CL_CHECK(cl_shm_open_comm(&shm, comm, "region", bytes));
        rc = map_here(shm.fd, bytes);
        cl_shm_detach(&shm);
    }
    if (rc == CL_OK)
        *base = mapped;
    return rc;
}
