/* lab02.h: types and functions of lab 02 (NVLink/PCIe topology discovery).
 * The harness (driver.c) calls the functions you write in lab02.c.
 *
 * The model of a server is cl_topo (common/topo.h): devices (GPUs, NICs), and
 * for every ordered pair the legend code of `nvidia-smi topo -m`. Only its
 * types are yours to use: the library's parsers and helpers are not part of
 * your program. */
#ifndef COMMLAB_LAB02_H
#define COMMLAB_LAB02_H

#include "p2p.h"
#include "result.h"
#include "topo.h"

#define LAB02_MAX_CELLS 96 /* codes one row may hold */

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

/* Parse the text of `nvidia-smi topo -m` (the whole output, NUL-terminated;
 * lines end in "\n" or "\r\n") into out. path names the text in messages:
 * CL_ERR_PARSE with cl_set_error("%s:%d: reason", path, line) on malformed
 * input, line counting from 1. */
cl_result lab02_parse_topo(const char *text, const char *path, cl_topo *out);

/* The NVLink domains of t (see the handout for the rule): domain[i] is the
 * domain of device i (0, 1, ... in the order they are formed) for GPUs, -1
 * for other devices. Returns the number of domains, or -1 on failure. */
int lab02_nvlink_domains(const cl_topo *t, int domain[CL_TOPO_MAX_DEVICES]);

/* GPU pairs (i < j) whose connection crosses the SMP interconnect (SYS);
 * -1 on failure. */
int lab02_sys_pairs(const cl_topo *t);

/* How many NVLink domains (domain[] from lab02_nvlink_domains) the n GPUs of
 * group span: 1 when the group stays inside one; -1 on failure. */
int lab02_group_domains(const cl_topo *t, const int domain[CL_TOPO_MAX_DEVICES], const int *group,
                        int n);

/* Your decision: the NIC each GPU uses. nic[i] is a NIC's device index for
 * every GPU i (one of its nearest NICs, spread so that as few GPUs as possible
 * share one), -1 for other devices, and -1 everywhere when t has no NIC. */
cl_result lab02_assign_nics(const cl_topo *t, int nic[CL_TOPO_MAX_DEVICES]);

#endif /* COMMLAB_LAB02_H */
