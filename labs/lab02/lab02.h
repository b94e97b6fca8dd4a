/* lab02.h: types and functions of lab 02 (NVLink/PCIe topology discovery).
 * The driver (driver.c) calls the functions you write in lab02.c. */
#ifndef COMMLAB_LAB02_H
#define COMMLAB_LAB02_H

#include <stdio.h>

#include "commlab.h"

#define LAB02_MAX_CELLS 96

/* What the CUDA runtime says about the GPUs of this machine. */
typedef struct lab02_probe {
    int ngpus;
    char busid[CL_TOPO_MAX_DEVICES][16];         /* "0000:07:00.0", lower case */
    int numa_node[CL_TOPO_MAX_DEVICES];          /* from sysfs; -1 when unknown */
    int can_access[CL_TOPO_MAX_DEVICES][CL_TOPO_MAX_DEVICES]; /* cudaDeviceCanAccessPeer */
    int perf_rank[CL_TOPO_MAX_DEVICES][CL_TOPO_MAX_DEVICES];  /* P2P performance rank */
} lab02_probe;

/* --- written by the student in lab02.c, in the order of the handout --- */

/* Classify one legend code: "X", "NV<n>" (n >= 1), "PIX", "PXB", "PHB",
 * "NODE", "SYS". Fill out->kind, out->nvlinks and out->code. CL_ERR_PARSE for
 * anything else (with a reason naming the code). */
cl_result lab02_parse_code(const char *code, cl_link *out);

/* Split the link part of a matrix row into legend codes. Codes are separated
 * by tabs or spaces, but pasted output can glue them ("SYSSYS", "PXBSYS"):
 * split those too. Stops after `want` codes and stores in *rest the text
 * after them (the affinity columns). Returns the number of codes found, or
 * -1 when a piece of text is not a legend code (reason via cl_set_error). */
int lab02_split_codes(const char *text, char codes[][8], int want, const char **rest);

/* Parse `nvidia-smi topo -m` output into out (see common/topo.h for the
 * model). CL_ERR_PARSE with cl_set_error("%s:%d: reason", path, line) on
 * malformed input. The library's own parsers are off limits here. */
cl_result lab02_parse_topo(FILE *f, const char *path, cl_topo *out);

/* Ask the CUDA runtime about every GPU (GPU machines; CL_ERR_UNSUPPORTED
 * when this build has no CUDA or the machine has no GPU). */
cl_result lab02_probe_gpus(lab02_probe *out);

#endif /* COMMLAB_LAB02_H */
