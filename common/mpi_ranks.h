/* mpi_ranks.h: the MPI_COMM_WORLD rank of every member of an MPI communicator, for the
 * MPI-based parts (p2p_mpi.c, gpu/boot_mpi.c) that hand a split group its world ranks. */
#ifndef COMMLAB_MPI_RANKS_H
#define COMMLAB_MPI_RANKS_H

#include <mpi.h>

#include "result.h"

/* *world = a malloc()ed array of comm's size: element i is the world rank of comm's rank i.
 * CL_ERR_NOMEM, or CL_ERR_BACKEND with MPI's reason. */
cl_result cl_mpi_world_ranks(MPI_Comm comm, int **world);

#endif /* COMMLAB_MPI_RANKS_H */
