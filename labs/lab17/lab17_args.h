/* lab17_args.h: the argument blocks of the student's entries, as both programs see them. */
#ifndef COMMLAB_LAB17_ARGS_H
#define COMMLAB_LAB17_ARGS_H

#include <stdint.h>

#include "lab17.h"

#define LAB17_CHANNELS 4 /* channels the cases ask about */

typedef struct local_args { /* TODO 1 and 2 */
    lab17_server s;
    lab17_env e;
    int32_t nlocal[LAB17_MAX_GPUS], local[LAB17_MAX_GPUS][LAB17_MAX_NICS];     /* out */
    int32_t ngpus_of[LAB17_MAX_NICS], gpus_of[LAB17_MAX_NICS][LAB17_MAX_GPUS]; /* out */
    int32_t nic[LAB17_MAX_GPUS][LAB17_CHANNELS];                               /* out */
    int32_t gpu_of[LAB17_MAX_NICS];                                            /* out */
} local_args;

typedef struct route_args { /* TODO 3, every GPU to every peer device, one channel */
    lab17_server s;
    lab17_env e;
    int32_t channel;
    int32_t nic[LAB17_MAX_GPUS][LAB17_MAX_GPUS], proxy[LAB17_MAX_GPUS][LAB17_MAX_GPUS]; /* out */
} route_args;

typedef struct chunk_args { /* TODO 4 */
    lab17_env e;
    int32_t nnodes, all_nvlink;
    int64_t chunk; /* out */
} chunk_args;

typedef struct stripe_args { /* TODO 5 */
    lab17_rails r;
    uint64_t bytes;
    int32_t sender;
} stripe_args;

#endif /* COMMLAB_LAB17_ARGS_H */
