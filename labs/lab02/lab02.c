/* lab02.c: lab 02, discovering the NVLink/PCIe topology of a server.
 *
 * You turn the text of `nvidia-smi topo -m` into a link matrix (the model of
 * common/topo.h), answer the questions chapter 1 asks of a server before any
 * parallel layout is chosen (NVLink domains, paths across the SMP
 * interconnect, whether a TP group stays in one domain), and decide which NIC
 * each GPU uses. Read labs/lab02/README.md first; the TODOs below are in the
 * order of its sections. Build with `make lab02`, grade with `./grade lab02`.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab02.h"

cl_result lab02_parse_code(const char *code, cl_link *out)
{
    // TODO(lab02) 1: classify one legend code (handout section 1): fill out->kind,
    //   out->nvlinks (0 unless NVLink) and out->code. Anything that is not a legend
    //   code: cl_set_error() naming it, and CL_ERR_PARSE.
    (void)code, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

int lab02_split_codes(const char *text, char codes[][8], int want, const char **rest)
{
    // TODO(lab02) 2: split a row's cells into legend codes (handout section 2), glued
    //   cells included. Return how many you found (at most `want`) and point *rest at
    //   the text after them; -1 (after cl_set_error) at text that is no code.
    (void)text, (void)codes, (void)want, (void)rest;
    return -1;
}

cl_result lab02_parse_topo(const char *text, const char *path, cl_topo *out)
{
    // TODO(lab02) 3: the whole output of `nvidia-smi topo -m` (handout section 3): the
    //   header, one row per device, the affinity columns, the NIC legend. Every error:
    //   cl_set_error("%s:%d: reason", path, line) and CL_ERR_PARSE.
    (void)text, (void)path, (void)out;
    return CL_ERR_NOT_IMPLEMENTED;
}

int lab02_nvlink_domains(const cl_topo *t, int domain[CL_TOPO_MAX_DEVICES])
{
    // TODO(lab02) 4: the NVLink domains (handout section 4): domain[i] for every
    //   device, -1 for devices that are no GPU; return how many domains there are.
    (void)t, (void)domain;
    return -1;
}

int lab02_sys_pairs(const cl_topo *t)
{
    // TODO(lab02) 5a: count the GPU pairs whose connection crosses SYS (section 5).
    (void)t;
    return -1;
}

int lab02_group_domains(const cl_topo *t, const int domain[CL_TOPO_MAX_DEVICES], const int *group,
                        int n)
{
    // TODO(lab02) 5b: how many NVLink domains the GPUs of group span (section 5).
    (void)t, (void)domain, (void)group, (void)n;
    return -1;
}

cl_result lab02_assign_nics(const cl_topo *t, int nic[CL_TOPO_MAX_DEVICES])
{
    // TODO(lab02) 6: your decision (handout section 6): for every GPU one of its
    //   nearest NICs, spread so that the busiest NIC serves as few GPUs as possible.
    (void)t, (void)nic;
    return CL_ERR_NOT_IMPLEMENTED;
}
