/* lab10.h: types and functions of lab 10 (CPU/NUMA affinity with hwloc).
 * The plug-in (driver.c) calls the functions you write in lab10.c; topology.c is code
 * the lab gives you (loading a topology, finding its GPUs and NICs). */
#ifndef COMMLAB_LAB10_H
#define COMMLAB_LAB10_H

#include <hwloc.h>

#include "commlab.h"

#define LAB10_MAX_DEVICES 64
#define LAB10_LIST_LEN    512  /* one cpu list, mask or command line */
#define LAB10_JOB_LEN     8192 /* a job-wide option (every rank's mask) or a rankfile */

/* The GPUs and RDMA NICs of one server, as topology.c finds them in an hwloc
 * topology: GPUs are NVIDIA PCI display/3D functions, NICs are PCI functions
 * that carry an OpenFabrics OS device; both in PCI bus-id order. */
typedef struct lab10_devices {
    int ngpus, nnics;
    hwloc_obj_t gpu[LAB10_MAX_DEVICES];
    hwloc_obj_t nic[LAB10_MAX_DEVICES];
    char nic_name[LAB10_MAX_DEVICES][32]; /* the OpenFabrics name: mlx5_0, rdmap16s27 */
} lab10_devices;

/* The binding options of a job of `nranks` local ranks; rank r gets set[r]. */
typedef struct lab10_options {
    int nranks;
    char cpulist[LAB10_MAX_DEVICES][LAB10_LIST_LEN]; /* "0-23,48-71" */
    /* "numactl --physcpubind=0-23,48-71 --membind=0" */
    char numactl[LAB10_MAX_DEVICES][LAB10_LIST_LEN];
    char taskset[LAB10_MAX_DEVICES][LAB10_LIST_LEN]; /* "taskset -c 0-23,48-71" */
    char slurm_mask[LAB10_JOB_LEN];                  /* "--cpu-bind=mask_cpu:0xff00ff,0xff00ff00" */
    char slurm_map[LAB10_JOB_LEN];                   /* "--cpu-bind=map_cpu:0,1,24,25" */
    char ompi_cpuset[LAB10_JOB_LEN]; /* "--cpu-set 0-47,48-95" (union of every rank's set) */
    char ompi_map[LAB10_LIST_LEN];   /* "--map-by ppr:4:numa --bind-to core" */
    char rankfile[LAB10_JOB_LEN];    /* "rank 0=HOST slot=0-23,48-71\n..." (physical PUs) */
} lab10_options;

/* --- given (topology.c) ------------------------------------------------------------ */

/* Load the topology recorded in the hwloc XML text xml (len bytes), keeping
 * every I/O object. CL_ERR_PARSE with hwloc's complaint for bad XML. */
cl_result lab10_load_xml(const char *xml, size_t len, hwloc_topology_t *out);

/* Find the GPUs and NICs of t (see lab10_devices). CL_ERR_INVALID when there
 * are more than LAB10_MAX_DEVICES of either. */
cl_result lab10_find_devices(hwloc_topology_t t, lab10_devices *d);

/* --- written by the student in lab10.c, in the order of the handout --- */

/* The cpuset of the first non-I/O ancestor of the I/O object dev (a PCI
 * device or an OS device): the CPUs "close" to it. Copies it into out.
 * CL_ERR_INVALID when dev is NULL or has no such ancestor. */
cl_result lab10_device_cpuset(hwloc_topology_t topo, hwloc_obj_t dev, hwloc_bitmap_t out);

/* The NIC closest to GPU `gpu`: the fewest parent steps from each of the two
 * objects up to their common ancestor, summed. Ties: the NIC with the fewest
 * users[] (GPUs already given it), then the lowest index. Returns the NIC
 * index, or -1 when the server has no NIC. */
int lab10_pick_nic(hwloc_topology_t topo, const lab10_devices *devs, int gpu, const int *users);

/* The cpuset of a rank that drives GPU `gpu` and NIC `nic` (-1: none): the
 * GPU's local cpuset intersected with the NIC's, or the GPU's alone when the
 * NIC is absent or the intersection is empty. */
cl_result lab10_rank_cpuset(hwloc_topology_t topo, const lab10_devices *devs, int gpu, int nic,
                            hwloc_bitmap_t out);

/* Fill out with the binding options of nranks ranks whose cpusets are sets[];
 * host names the node in the rankfile. See the handout for every format. */
cl_result lab10_format_options(hwloc_topology_t topo, hwloc_bitmap_t const *sets, int nranks,
                               const char *host, lab10_options *out);

/* Bind the calling thread to the CPUs of set that exist on this machine,
 * for real. CL_ERR_INVALID when none of them exists here; CL_ERR_BACKEND
 * when hwloc refuses. */
cl_result lab10_bind_here(hwloc_const_bitmap_t set);

#endif /* COMMLAB_LAB10_H */
