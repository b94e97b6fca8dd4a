/* lab11_ops.h: the operations lab 11's harness provides to the student's program (cl_lab_call). */
#ifndef COMMLAB_LAB11_OPS_H
#define COMMLAB_LAB11_OPS_H

enum { LAB11_OP_COMPUTE = 1 };

/* LAB11_OP_COMPUTE: part `part` of `parts` of layer `layer`'s kernel. */
typedef struct lab11_compute_args {
    int layer, part, parts;
} lab11_compute_args;

#endif /* COMMLAB_LAB11_OPS_H */
