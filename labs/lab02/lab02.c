/* lab02.c: lab 02, discovering the NVLink/PCIe topology of a server.
 *
 * You turn the text of `nvidia-smi topo -m` into a link matrix (the model
 * of common/topo.h), and on a GPU machine ask the CUDA runtime the same
 * questions to compare. Read labs/lab02/README.md first; the TODOs below are
 * in the order of its sections. Build with `make lab02`, grade with
 * `./grade lab02`.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "lab02.h"

cl_result lab02_parse_code(const char *code, cl_link *out)
{
    // TODO(lab02) 1: legend codes.
    //   "X" is the device itself; "NV<n>" is a bond of n >= 1 NVLinks (nvlinks = n);
    //   "PIX", "PXB", "PHB", "NODE", "SYS" are PCIe/SMP paths (see the handout's table).
    //   Fill out->kind, out->nvlinks (0 unless NVLink) and out->code (the code as given).
    //   Anything else: cl_set_error("unknown link code '%s'", code); return CL_ERR_PARSE.
    (void)code, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}


int lab02_split_codes(const char *text, char codes[][8], int want, const char **rest)
{
    // TODO(lab02) 2: split a row into codes.
    //   Skip spaces and tabs; at each position take the legend code that starts
    //   there ("NV" + digits, NODE, SYS, PIX, PXB, PHB, X) even when the next code
    //   follows without a space ("SYSSYS" is two cells). Stop after `want` codes
    //   and set *rest to what follows. Text that is no code: cl_set_error(...) and
    //   return -1.
    (void)text, (void)codes, (void)want, (void)rest;
    return -1;
}


cl_result lab02_parse_topo(FILE *f, const char *path, cl_topo *out)
{
    // TODO(lab02) 3: the whole file.
    //   a) Skip text until the header line (it starts with GPU0). Its words are the
    //      device labels (split glued ones like "NIC7NIC8"), then the affinity
    //      columns "CPU Affinity", "NUMA Affinity", "GPU NUMA ID".
    //   b) One row per device, in header order: its label, one code per device
    //      (lab02_split_codes, lab02_parse_code; X on the diagonal only), then the
    //      affinity values: set numa_given when the NUMA column has a value;
    //      "N/A" means none (numa_node stays -1).
    //   c) After the matrix, "NIC0: mlx5_0" lines rename NIC0 to mlx5_0 (label stays).
    //   d) Every error: cl_set_error("%s:%d: reason", path, line) and CL_ERR_PARSE.
    (void)f, (void)path, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

cl_result lab02_probe_gpus(lab02_probe *out)
{
    // TODO(lab02) 4: ask the CUDA runtime (GPU machines only).
    //   Inside #ifdef CL_HAVE_CUDA: cudaGetDeviceCount (an error or 0 devices:
    //   CL_ERR_UNSUPPORTED); per GPU cudaDeviceGetPCIBusId (lower-case it) and
    //   /sys/bus/pci/devices/<busid>/numa_node; per pair cudaDeviceCanAccessPeer and
    //   cudaDeviceGetP2PAttribute(..., cudaDevP2PAttrPerformanceRank, ...).
    //   Without CL_HAVE_CUDA return CL_ERR_UNSUPPORTED.
    (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}
