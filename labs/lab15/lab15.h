/* lab15.h: types and functions of lab 15 (a validator of lossless RoCE v2 configuration).
 * The driver (driver.c) reads a cluster's dump, splits it into the output of each tool on
 * each node, and calls the functions you write in lab15.c. */
#ifndef COMMLAB_LAB15_H
#define COMMLAB_LAB15_H

#include "commlab.h"

#define LAB15_MAX_SECTIONS 120
#define LAB15_MAX_FINDINGS 48

/* One tool's output on one node, as the dump recorded it. */
typedef struct lab15_section {
    char kind[8];      /* "policy", "host" or "switch" */
    char node[32];     /* "gpu01", "leaf01"; "" for the policy */
    char command[200]; /* as it ran: "mlnx_qos -i ens1f0np0", "show_gids", "show roce" */
    const char *text;  /* its output, NUL-terminated */
} lab15_section;

typedef struct lab15_dump {
    int n;
    lab15_section s[LAB15_MAX_SECTIONS];
} lab15_dump;

/* One thing to fix, and how. */
typedef struct lab15_finding {
    char code[16];   /* what is wrong: "pfc", "nccl_ib_tc", "sw_ecn", ... (README, section 6) */
    char node[32];   /* the host or switch */
    char target[32]; /* the RDMA device ("mlx5_0") for a NIC's setting; "-" otherwise */
    char fix[256];   /* the command(s) that fix it, separated by " ; " */
} lab15_finding;

/* --- the tools' outputs, parsed (written by the student in lab15.c, in handout order) --- */

/* mlnx_qos -i <netdev> */
typedef struct lab15_qos {
    char trust[8];       /* "dscp" or "pcp" */
    int dscp2prio[64];   /* the priority of each DSCP; -1 where the output does not say */
    int pfc[8];          /* 1 where PFC is enabled */
    int prio2buffer[8];  /* the receive buffer of each priority; -1 when not listed */
    long buffer_size[8]; /* bytes of each receive buffer; -1 when not listed */
} lab15_qos;
cl_result lab15_parse_mlnx_qos(const char *text, lab15_qos *q);

/* show_gids: one row per GID */
typedef struct lab15_gid {
    char dev[32]; /* "mlx5_0" */
    int port, index;
    char gid[40];    /* as listed: "0000:0000:0000:0000:0000:ffff:c0a8:010b" */
    char ipv4[16];   /* "192.168.1.10", "" when the GID holds none */
    int version;     /* 1 (RoCE v1, or InfiniBand) or 2 (RoCE v2) */
    char netdev[32]; /* "ens1f0np0" */
} lab15_gid;
cl_result lab15_parse_show_gids(const char *text, lab15_gid *g, int max, int *n);

/* ibv_devinfo -v: one entry per port */
typedef struct lab15_port {
    char dev[32]; /* hca_id */
    int port;
    int active;     /* state PORT_ACTIVE */
    int active_mtu; /* bytes: 256 .. 4096 */
    int ethernet;   /* link_layer Ethernet (RoCE) */
} lab15_port;
cl_result lab15_parse_devinfo(const char *text, lab15_port *p, int max, int *n);

/* show roce (the switch) */
typedef struct lab15_switch {
    char mode[16];     /* "lossless", "lossy" */
    char trust[8];     /* "L2", "L3", "both" */
    char ecn_mode[32]; /* "ecn, absolute" */
    int ecn_min_kb, ecn_max_kb;
    int pfc_enabled; /* PFC : enabled */
    int pfc_prio[8]; /* 1 for each switch-priority with PFC enabled */
    int ntcs;        /* RoCE used TCs */
    struct {
        int switch_prio, tc;
        char app[16]; /* "RoCE", "CNP" */
        char ets[16]; /* "Strict", "WRR 50%" */
    } tcs[8];
} lab15_switch;
cl_result lab15_parse_show_roce(const char *text, lab15_switch *s);

/* The validator: every finding of the dump, each with its fix, into out[0..*n). */
cl_result lab15_validate(const lab15_dump *d, lab15_finding *out, int max, int *n);

#endif /* COMMLAB_LAB15_H */
