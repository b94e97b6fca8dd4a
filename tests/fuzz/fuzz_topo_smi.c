/* fuzz_topo_smi.c: libFuzzer target for cl_topo_parse_smi (`nvidia-smi topo -m` text). */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_topo(cl_topo_parse_smi, "fuzz.topo.txt", data, size);
}
