/* lab21_ops.h: the operation lab 21's harness provides to the student's program (cl_lab_call).
 *
 * After lab21_init_parallel returns, the plug-in's own code (driver.c, student
 * side) shows the harness each communicator it built: LAB21_OP_GROUP on the
 * communicator of a kind, LAB21_OP_NONE on the world when the rank has none.
 * The harness reads the members of each communicator itself. */
#ifndef COMMLAB_LAB21_OPS_H
#define COMMLAB_LAB21_OPS_H

enum { LAB21_OP_GROUP = 1, LAB21_OP_NONE = 2 };

typedef struct lab21_group_args {
    int kind; /* enum lab21_kind */
} lab21_group_args;

#endif /* COMMLAB_LAB21_OPS_H */
