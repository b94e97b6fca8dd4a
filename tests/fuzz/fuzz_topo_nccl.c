/* fuzz_topo_nccl.c: libFuzzer target for cl_topo_parse_nccl (NCCL topology XML). */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_topo(cl_topo_parse_nccl, "fuzz.nccl.xml", data, size);
}
