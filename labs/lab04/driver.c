/* driver.c: lab 04's plug-in: the ring bottleneck, the channel search, the trees, the graph file.
 *
 *   lab04 bottleneck topo=FILE nvlink=20 pci=12 sys=6 sm=70 ring=0,3,2,1,5,6,7,4
 *   lab04 search     topo=FILE nvlink=20 pci=12 sys=6 sm=70 [max_rings=16] [topo_json=OUT]
 *   lab04 trees      n=8 [order=3,1,0,2,...]
 *   lab04 xml        topo=FILE nvlink=20 pci=12 sys=6 sm=70 rings=0,3,..;0,4,.. [xml=OUT]
 *   lab04 bench      [--backend gpu] [--bytes 256M] [--repeats 5]      (under mpirun)
 *
 * The machine is the shared model of common/sim (sim_topo.h: links and routes
 * with NCCL's bandwidths; sim_channels.h: NCCL's search, its per-channel cap,
 * channels simulated at once). search checks the student's rings, simulates
 * them, and puts beside them NCCL's own search on the same machine and the
 * index ring; xml writes the student's graph file of the given rings and says
 * what NCCL would have written (channels, speed, path type).
 * bench times the backend's AllReduce (NCCL on gpu; the grader runs it with and
 * without NCCL_GRAPH_FILE).
 *
 * This file holds the student's entries and the lab's table; the modes on a machine are in
 * harness_rings.c, the trees in harness_trees.c, the bench in harness_bench.c, and the
 * lists the cases read and the rows show in harness_lists.c (lab04_harness.h).
 */
#include "lab04_harness.h"

#ifdef CL_STUDENT_SIDE

static cl_result bottleneck(cl_comm *c, void *args)
{
    (void)c;
    bottleneck_args *a = args;
    return lab04_ring_bottleneck(&a->m, a->ring, &a->gbps);
}

static cl_result search(cl_comm *c, void *args)
{
    (void)c;
    search_args *a = args;
    return lab04_search_rings(&a->m, a->rings, a->max_rings, &a->nrings);
}

static cl_result trees(cl_comm *c, void *args)
{
    (void)c;
    trees_args *a = args;
    return lab04_double_tree(a->n, a->order, &a->t0, &a->t1);
}

static cl_result graph_xml(cl_comm *c, void *args)
{
    (void)c;
    xml_args *a = args;
    return lab04_write_graph_xml(&a->m, (const int(*)[LAB04_MAX_GPUS])a->rings, a->nrings, a->xml,
                                 sizeof a->xml);
}

CL_STUDENT_ENTRIES({"bottleneck", bottleneck}, {"search", search}, {"trees", trees},
                   {"xml", graph_xml});

#else

const cl_lab cl_lab_def = {
    .name = "lab04",
    .title = "NCCL 原理: ring 与 tree",
    .modes =
        (const cl_mode[]){
            {.name = "bottleneck",
             .help = "your bandwidth of one ring (topo= nvlink= pci= sys= sm= ring=)",
             .cases = bottleneck_case},
            {.name = "search",
             .help = "your channels, simulated beside NCCL's search (topo= ... [xml=])",
             .cases = search_case},
            {.name = "trees", .help = "your double binary tree (n= [order=])", .cases = trees_case},
            {.name = "xml",
             .help = "your graph file of rings= (topo= ... [xml=OUT])",
             .cases = xml_case},
            {.name = "bench",
             .help = "the backend's AllReduce busbw at --bytes (gpu: NCCL)",
             .ranks = bench,
             .backends = "cpu,gpu"},
            {0}},
};

#endif
