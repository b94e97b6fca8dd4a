/* topo.h: the topology of one server: devices (GPUs, NICs) and the link class
 * between every pair, as `nvidia-smi topo -m` prints it.
 *
 * Two parsers fill the same model:
 *   cl_topo_parse_smi()  the text of `nvidia-smi topo -m` (any driver era,
 *                        tabs or spaces, NIC legend, CPU/NUMA affinity columns)
 *   cl_topo_parse_nccl() NCCL's topology XML (NCCL_TOPO_DUMP_FILE); PCIe
 *                        classes are derived from the PCI tree as NCCL does
 *                        (NCCL has no NODE class: same-CPU paths are PHB).
 *
 * Invariants of a parsed cl_topo: ndevices <= CL_TOPO_MAX_DEVICES; devices are
 * in file order; link[i][i].kind == CL_LINK_SELF and no other cell is SELF;
 * for CL_LINK_NVLINK, nvlinks >= 1 is the bonded link count (NV12 -> 12).
 * Parsers return CL_ERR_PARSE with cl_last_error() = "file:line: reason".
 */
#ifndef COMMLAB_TOPO_H
#define COMMLAB_TOPO_H

#include <stdio.h>

#include "result.h"

#define CL_TOPO_MAX_DEVICES 64
#define CL_TOPO_NAME_LEN    32
#define CL_TOPO_CPUSET_LEN  128

typedef enum cl_link_kind {
    CL_LINK_SELF,   /* X    the device itself */
    CL_LINK_NVLINK, /* NV#  a bonded set of # NVLinks */
    CL_LINK_PIX,    /* at most a single PCIe bridge */
    CL_LINK_PXB,    /* multiple PCIe bridges, no host bridge */
    CL_LINK_PHB,    /* a PCIe host bridge (the CPU) */
    CL_LINK_NODE,   /* between host bridges of one NUMA node */
    CL_LINK_SYS,    /* the SMP interconnect between NUMA nodes (QPI/UPI/xGMI) */
    CL_LINK_UNKNOWN /* a code this model does not know; kept, never guessed */
} cl_link_kind;

typedef struct cl_link {
    cl_link_kind kind;
    int nvlinks;  /* bonded NVLink count when kind == CL_LINK_NVLINK, else 0 */
    char code[8]; /* the legend code as printed: "NV12", "PXB", "X" */
} cl_link;

typedef enum cl_device_kind { CL_DEV_GPU, CL_DEV_NIC, CL_DEV_OTHER } cl_device_kind;

typedef struct cl_device {
    char name[CL_TOPO_NAME_LEN];  /* GPU0, mlx5_0 (a NIC legend alias NIC0 is resolved) */
    char label[CL_TOPO_NAME_LEN]; /* the column header as printed: GPU0, NIC0, mlx5_2 */
    cl_device_kind kind;
    char cpu_affinity[CL_TOPO_CPUSET_LEN]; /* "0-19,40-59"; "" when not given */
    int numa_node;                         /* NUMA Affinity column; -1 when absent or N/A */
    int numa_given;                        /* 1 when the file gave a NUMA value (a number or N/A) */
    char busid[16]; /* PCI bus id from XML ("0000:07:00.0"); "" from topo -m */
} cl_device;

typedef struct cl_topo {
    int ndevices;
    cl_device dev[CL_TOPO_MAX_DEVICES];
    cl_link link[CL_TOPO_MAX_DEVICES][CL_TOPO_MAX_DEVICES];
} cl_topo;

/* Parse `nvidia-smi topo -m` text from f; path is used in error messages.
 * Returns CL_OK, or CL_ERR_PARSE with "path:line: reason". */
cl_result cl_topo_parse_smi(FILE *f, const char *path, cl_topo *out);

/* Parse an NCCL topology XML file (<system version="1">). */
cl_result cl_topo_parse_nccl(FILE *f, const char *path, cl_topo *out);

/* Open path and parse it, choosing the format from its content ('<' first). */
cl_result cl_topo_load(const char *path, cl_topo *out);

/* Classify one legend code ("NV4", "SYS", "X"). Returns CL_ERR_PARSE for
 * something that is not a legend code. */
cl_result cl_link_from_code(const char *code, cl_link *out);

/* The short name of a kind: "X", "NV", "PIX", ... This function can't fail. */
const char *cl_link_kind_name(cl_link_kind kind);

/* Number of GPUs (devices of kind CL_DEV_GPU), which come first in every
 * recorded file but are counted, not assumed. */
int cl_topo_gpu_count(const cl_topo *t);

/* Index of the device called name (name or label), or -1. */
int cl_topo_find(const cl_topo *t, const char *name);

/* Write the topology as JSON (the format of `commlab topo --json`), one line:
 *   {"devices": [names], "links": [[code, ...], ...], "cpu_affinity": {name: "0-19,40-59"},
 *    "numa_affinity": {name: 0 or null}}
 * Affinity maps list only devices with a value (numa null for N/A).
 * Returns CL_OK, or CL_ERR_IO when writing fails. */
cl_result cl_topo_write_json(const cl_topo *t, FILE *out);

#endif /* COMMLAB_TOPO_H */
