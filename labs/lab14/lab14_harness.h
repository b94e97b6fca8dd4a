/* lab14_harness.h: what lab 14's driver.c shares with its harness_*.c files.
 *
 * driver.c          the student's entries (both sides compile it) and the lab's table
 * harness_fabric.c  memory the student's program shares, the fabric and its routes
 *                   converted both ways, the student's call and the columns every mode reports
 * harness_checks.c  the build, route, deadlock and loads modes
 * harness_plan.c    the plan mode: the student's placement and routes, timed
 */
#ifndef COMMLAB_LAB14_HARNESS_H
#define COMMLAB_LAB14_HARNESS_H

#include "harness/harness.h"
#include "lab14.h"

enum { BUILD_FATTREE, BUILD_LEAFSPINE, BUILD_RAIL };
enum { ROUTE_DMODK, ROUTE_UPDOWN };

/* The argument blocks of the student's functions, the same on both sides. */
typedef struct build_args {
    int kind, p[4];
    lab14_fabric *f;
    int *hca;
} build_args;

typedef struct route_args {
    int algo, root;
    const lab14_fabric *f;
    lab14_routes *r;
} route_args;

typedef struct deadlock_args {
    const lab14_fabric *f;
    const lab14_routes *r;
    int acyclic, len;           /* out */
    int cycle[LAB14_MAX_CYCLE]; /* out */
} deadlock_args;

typedef struct loads_args {
    const lab14_fabric *f;
    const lab14_routes *r;
    int pattern, shift, n;
    const int *hosts;
    double bytes;
    lab14_flow *flows; /* out */
    int nflows;        /* out */
    double *load;      /* out */
} loads_args;

typedef struct plan_args {
    const lab14_fabric *f;
    const lab14_job *job;
    int *order;      /* out */
    lab14_routes *r; /* out */
} plan_args;

#ifndef CL_STUDENT_SIDE
#include "fabric.h"

/* --- harness_fabric.c --- */

/* Zeroed memory the student's program shares (free it with cl_host_free), or NULL. */
void *shared(size_t bytes);

/* The harness's fabric as the student's, and the student's back, checked
 * (CL_ERR_INVALID with a reason). */
void to_student(const cl_fabric *f, lab14_fabric *s);
cl_result from_student(const lab14_fabric *s, cl_fabric *f);

/* The case's fabric=FILE, read (its hosts and switches go in the row). */
cl_result read_fabric(cl_case *c, cl_fabric **out);

/* Forwarding tables, the harness's as the student's and back. */
void routes_to_student(const cl_fabric_routes *r, lab14_routes *s);
void routes_from_student(const lab14_routes *s, cl_fabric_routes *r);

/* Call the student's function for the case; *ok says whether it returned CL_OK. */
cl_result call(cl_case *c, const char *entry, void *args, size_t bytes, int *ok);

/* The route check's columns, and the fabric with the load on each cable (the picture). */
void report_check(cl_row *row, const cl_fabric_check *k);
void report_drawing(cl_row *row, const cl_fabric *f, const double *load, const double *job);

/* --- the modes (harness_checks.c, harness_plan.c) --- */

cl_result build_case(cl_case *c);
cl_result route_case(cl_case *c);
cl_result deadlock_case(cl_case *c);
cl_result loads_case(cl_case *c);
cl_result plan_case(cl_case *c);
#endif

#endif /* COMMLAB_LAB14_HARNESS_H */
