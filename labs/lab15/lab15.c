/* lab15.c: a validator of lossless RoCE v2 configuration: parse what the tools print on
 * each host and switch, check it against the site's policy and against itself, and say
 * what to change, with the command that changes it. See README.md. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab15.h"

/* --- 1. mlnx_qos ------------------------------------------------------------------------- */

cl_result lab15_parse_mlnx_qos(const char *text, lab15_qos *q)
{
    // TODO(lab15) 1: read the trust state, the dscp2prio lines (a priority's DSCPs may span
    //                several lines), the receive buffer sizes and the PFC table (its
    //                "enabled" and "buffer" rows). What the output does not say stays -1.
    (void)text, (void)q;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 2. show_gids ---------------------------------------------------------------------------- */

cl_result lab15_parse_show_gids(const char *text, lab15_gid *g, int max, int *n)
{
    // TODO(lab15) 2: one lab15_gid per row of the table; the IPv4 and netdev columns may be
    //                empty.
    (void)text, (void)g, (void)max, (void)n;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 3. ibv_devinfo -v ---------------------------------------------------------------------- */

cl_result lab15_parse_devinfo(const char *text, lab15_port *p, int max, int *n)
{
    // TODO(lab15) 3: one lab15_port per "port:" of each hca_id: its state, active_mtu (in
    //                bytes) and link_layer.
    (void)text, (void)p, (void)max, (void)n;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 4. the switch's show roce --------------------------------------------------------------- */

cl_result lab15_parse_show_roce(const char *text, lab15_switch *s)
{
    // TODO(lab15) 4: the RoCE mode, the port trust mode, the congestion-control mode and
    //                thresholds, PFC and its switch-priorities, and the rows of "RoCE used
    //                TCs".
    (void)text, (void)s;
    return CL_ERR_NOT_IMPLEMENTED;
}

/* --- 5. the validator ------------------------------------------------------------------------- */

cl_result lab15_validate(const lab15_dump *d, lab15_finding *out, int max, int *n)
{
    // TODO(lab15) 5: read the policy; for each host find its RDMA devices and which are on
    //                the fabric, check each fabric NIC and the job's NCCL settings; check
    //                each switch. One finding per fault, with the command that fixes it.
    (void)d, (void)out, (void)max, (void)n;
    return CL_ERR_NOT_IMPLEMENTED;
}
