/* lab08.h: types and functions of lab 08 (16 GPUs and NVSwitch: ring, tree or NVLS per size).
 * The driver (driver.c) calls the functions you write in lab08.c. */
#ifndef COMMLAB_LAB08_H
#define COMMLAB_LAB08_H

#include "commlab.h"
#include "sim/sim_system.h"

/* The algorithms and protocols of NCCL's tuning model (src/graph/tuning.cc); the
 * protocol values are those of sim_system.h (CL_PROTO_LL, CL_PROTO_LL128, CL_PROTO_SIMPLE). */
typedef enum lab08_algo { LAB08_RING, LAB08_TREE, LAB08_NVLS, LAB08_NALGOS } lab08_algo;

/* NCCL_ALGO / NCCL_PROTO spellings: "Ring", "Tree", "NVLS"; "LL", "LL128", "Simple".
 * These can't fail ("?" for an unknown value). */
const char *lab08_algo_name(int algo);
const char *lab08_proto_name(int proto);

/* --- written by the student in lab08.c, in the order of the handout --- */

/* Predicted time (microseconds) of one AllReduce of `bytes` per GPU over the
 * s->gpus_per_node GPUs of one NVSwitch node of system s, with algorithm algo and
 * protocol proto forced, by NCCL's alpha-beta tuning model as the handout states
 * it. CL_ERR_UNSUPPORTED when the pair cannot run on s (NVLS without NVLink
 * SHARP, NVLS with LL or LL128, a protocol the system disables). */
cl_result lab08_predict_us(const cl_sim_system *s, int algo, int proto, double bytes,
                           double *us);

/* The (algorithm, protocol) pair with the lowest predicted time for `bytes`
 * (what NCCL's tuner picks). */
cl_result lab08_choose(const cl_sim_system *s, double bytes, int *algo, int *proto);

#endif /* COMMLAB_LAB08_H */
