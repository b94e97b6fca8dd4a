/* fuzz_topo_nccl.c: libFuzzer target for cl_topo_parse_nccl (NCCL topology XML). */
#include <stdint.h>

#include "fuzz_common.h"
#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cl_topo topo;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    cl_clear_error();
    cl_result rc = cl_topo_parse_nccl(f, "fuzz.nccl.xml", &topo);
    fclose(f);
    fuzz_expect_located(rc, "fuzz.nccl.xml");
    if (rc == CL_OK) {
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
    }
    return 0;
}
