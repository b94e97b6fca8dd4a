/* lab24_ops.h: the operations lab 24's harness provides to the student's program (cl_lab_call). */
#ifndef COMMLAB_LAB24_OPS_H
#define COMMLAB_LAB24_OPS_H

enum { LAB24_OP_BACKWARD = 1 };

/* LAB24_OP_BACKWARD: run the next part of the backward pass. Out: the parameters whose
 * gradients the part's kernel finished, and the parts still to run. */
typedef struct lab24_backward_args {
    int ready[2];
    int nready;
    int left;
} lab24_backward_args;

#endif /* COMMLAB_LAB24_OPS_H */
