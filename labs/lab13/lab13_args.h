/* lab13_args.h: the argument blocks of lab 13's functions: the same in the harness and in the
 * student's program (driver.c's adapters unpack them). */
#ifndef COMMLAB_LAB13_ARGS_H
#define COMMLAB_LAB13_ARGS_H

#include <stddef.h>

#include "lab13.h"

typedef struct open_args {
    lab13_config cfg;
    void *buf;
    size_t bytes;
    lab13_conn *conn;     /* out */
    lab13_endpoint local; /* out */
} open_args;

typedef struct conn_args {
    lab13_conn *conn;
} conn_args;

typedef struct exchange_args {
    lab13_conn *conn;
    char host[64];
    int port, server;
    lab13_endpoint local, remote; /* remote: out */
} exchange_args;

typedef struct rtr_args {
    lab13_conn *conn;
    lab13_endpoint remote;
} rtr_args;

typedef struct write_args {
    lab13_conn *conn;
    lab13_endpoint remote;
    size_t offset, total, msg;
    int depth;
} write_args;

typedef struct pingpong_args {
    lab13_conn *conn;
    int server;
    size_t send_off, recv_off, bytes;
    int iters;
} pingpong_args;

typedef struct plan_args {
    lab13_plan plan; /* out */
} plan_args;

#endif /* COMMLAB_LAB13_ARGS_H */
