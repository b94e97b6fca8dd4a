/* harness_net.c: lab 24's model network and the grader's own copy of DDP's bucket assignment.
 *
 * The network is a GPT-style stack (Radford et al. 2019): each layer registers
 * ln_1.{weight,bias}, attn.c_attn.{weight,bias} (h x 3h), attn.c_proj (h x h),
 * ln_2, mlp.c_fc (h x 4h), mlp.c_proj (4h x h), in that order, and a final
 * ln_f follows. The backward pass runs the kernels in the reverse of the forward
 * pass; a linear layer's kernel (its input gradient and weight gradient) costs
 * 4 x in x out per token, the attention core 8 x s x h (s = 1024), LayerNorm 10 h.
 */
#include <math.h>
#include <string.h>

#include "harness_lab24.h"

#define SEQ 1024.0

enum {
    LN1_W,
    LN1_B,
    QKV_W,
    QKV_B,
    PROJ_W,
    PROJ_B,
    LN2_W,
    LN2_B,
    FC_W,
    FC_B,
    FC2_W,
    FC2_B,
    PER_LAYER
};

static void add_kernel(lab24_net *n, double weight, int w, int b)
{
    lab24_kernel *k = &n->kernel[n->kernels++];
    *k = (lab24_kernel){.weight = weight, .parts = 1};
    if (w >= 0)
        k->ready[k->nready++] = w;
    if (b >= 0)
        k->ready[k->nready++] = b;
}

cl_result lab24_net_build(lab24_net *n, int layers, int hidden, double quantum)
{
    memset(n, 0, sizeof *n);
    if (layers < 1 || PER_LAYER * layers + 2 > LAB24_MAX_PARAMS || hidden < 8 || hidden > 8192 ||
        !(quantum >= 0)) {
        cl_set_error("a net of %d layers of %d (1 to %d layers, hidden 8 to 8192)", layers, hidden,
                     (LAB24_MAX_PARAMS - 2) / PER_LAYER);
        return CL_ERR_INVALID;
    }
    double h = hidden, shape[PER_LAYER] = {h, h, 3 * h * h, 3 * h, h * h,     h,
                                           h, h, 4 * h * h, 4 * h, 4 * h * h, h};
    n->params = PER_LAYER * layers + 2;
    for (int l = 0; l < layers; l++)
        for (int i = 0; i < PER_LAYER; i++)
            n->bytes[PER_LAYER * l + i] = 4 * shape[i];
    int lnf = PER_LAYER * layers;
    n->bytes[lnf] = n->bytes[lnf + 1] = 4 * h;
    add_kernel(n, 10 * h, lnf, lnf + 1);
    for (int l = layers - 1; l >= 0; l--) {
        int b = PER_LAYER * l;
        add_kernel(n, 16 * h * h + 8 * h, b + FC2_W, b + FC2_B); /* with GeLU's backward */
        add_kernel(n, 16 * h * h, b + FC_W, b + FC_B);
        add_kernel(n, 10 * h, b + LN2_W, b + LN2_B);
        add_kernel(n, 4 * h * h, b + PROJ_W, b + PROJ_B);
        add_kernel(n, 8 * SEQ * h, -1, -1); /* the attention core has no parameters */
        add_kernel(n, 12 * h * h, b + QKV_W, b + QKV_B);
        add_kernel(n, 10 * h, b + LN1_W, b + LN1_B);
    }
    int k = 0;
    for (int i = 0; i < n->kernels; i++)
        for (int j = 0; j < n->kernel[i].nready; j++)
            n->order[k++] = n->kernel[i].ready[j];
    for (int i = 0; i < n->params; i++)
        n->total_bytes += n->bytes[i];
    n->quantum = quantum;
    return CL_OK;
}

cl_result lab24_net_scale(lab24_net *n, double compute_s)
{
    double total = 0;
    for (int i = 0; i < n->kernels; i++)
        total += n->kernel[i].weight;
    if (!(compute_s > 0) || !(total > 0)) {
        cl_set_error("a backward pass of %g s", compute_s);
        return CL_ERR_INVALID;
    }
    n->compute_s = compute_s, n->parts = 0, n->quantum_s = 0;
    for (int i = 0; i < n->kernels; i++) {
        lab24_kernel *k = &n->kernel[i];
        k->s = compute_s * k->weight / total;
        k->parts = n->quantum > 0 ? (int)ceil(k->s / n->quantum) : 1;
        k->parts = k->parts < 1 ? 1 : k->parts;
        n->parts += k->parts;
        n->quantum_s = fmax(n->quantum_s, k->s / k->parts);
    }
    return CL_OK;
}

void lab24_net_ready_times(const lab24_net *n, double *ready_s)
{
    double t = 0;
    int k = 0;
    for (int i = 0; i < n->kernels; i++) {
        t += n->kernel[i].s;
        for (int j = 0; j < n->kernel[i].nready; j++)
            ready_s[k++] = t;
    }
}

/* compute_bucket_assignment_by_size: walk the tensors in the given order, add each to
 * the open bucket, close the bucket once its size reaches the current limit, and move
 * the limit iterator on (its last value stays). DDP_SET_LAST_BUCKET_CAP reverses the
 * order before and the buckets after. */
cl_result lab24_ddp_assign(const lab24_net *n, const lab24_caps *caps, lab24_buckets *out)
{
    if (!(caps->first_cap > 0) || !(caps->cap > 0)) {
        cl_set_error("bucket caps of %g and %g bytes", caps->first_cap, caps->cap);
        return CL_ERR_INVALID;
    }
    const double limits[2] = {caps->first_cap, caps->cap};
    const double *limit = limits;
    int idx[LAB24_MAX_PARAMS], bucket_of_first[LAB24_MAX_PARAMS + 1], nb = 0, len = 0;
    double size = 0;
    for (int i = 0; i < n->params; i++)
        idx[i] = caps->last_small ? n->order[n->params - 1 - i] : n->order[i];
    bucket_of_first[0] = 0;
    for (int i = 0; i < n->params; i++) {
        size += n->bytes[idx[i]];
        len++;
        if (size >= *limit) {
            bucket_of_first[++nb] = i + 1;
            size = 0, len = 0;
            if (limit + 1 < limits + 2)
                limit++;
        }
    }
    if (len)
        bucket_of_first[++nb] = n->params;
    out->n = nb;
    int at = 0;
    for (int b = 0; b < nb; b++) {
        int src = caps->last_small ? nb - 1 - b : b;
        out->start[b] = at;
        for (int i = bucket_of_first[src]; i < bucket_of_first[src + 1]; i++)
            out->param[at++] = idx[i];
    }
    out->start[nb] = at;
    return CL_OK;
}

cl_result lab24_buckets_check(const lab24_buckets *b, int params)
{
    unsigned char seen[LAB24_MAX_PARAMS] = {0};
    if (b->n < 1 || b->n > params || b->start[0] != 0 || b->start[b->n] != params) {
        cl_set_error("your buckets are not a partition of the %d gradients (%d buckets, "
                     "starts %d .. %d)",
                     params, b->n, b->n >= 1 && b->n <= params ? b->start[0] : -1,
                     b->n >= 1 && b->n <= params ? b->start[b->n] : -1);
        return CL_ERR_INVALID;
    }
    for (int k = 0; k < b->n; k++)
        if (b->start[k + 1] <= b->start[k]) {
            cl_set_error("your bucket %d is empty or out of order", k);
            return CL_ERR_INVALID;
        }
    for (int i = 0; i < params; i++) {
        int p = b->param[i];
        if (p < 0 || p >= params || seen[p]) {
            cl_set_error("gradient %d is in your buckets %s", p,
                         p < 0 || p >= params ? "but no such parameter exists" : "twice");
            return CL_ERR_INVALID;
        }
        seen[p] = 1;
    }
    return CL_OK;
}

int lab24_buckets_equal(const lab24_buckets *a, const lab24_buckets *b, int params)
{
    if (a->n != b->n)
        return 0;
    for (int k = 0; k <= a->n; k++)
        if (a->start[k] != b->start[k])
            return 0;
    for (int i = 0; i < params; i++)
        if (a->param[i] != b->param[i])
            return 0;
    return 1;
}

void lab24_layout(const lab24_net *n, const lab24_buckets *b, size_t *off, size_t *largest)
{
    size_t at = 0;
    *largest = 0;
    for (int k = 0; k < b->n; k++) {
        size_t first = at;
        for (int j = b->start[k]; j < b->start[k + 1]; j++) {
            off[b->param[j]] = at;
            at += (size_t)(n->bytes[b->param[j]] / sizeof(float));
        }
        if (at - first > *largest)
            *largest = at - first;
    }
}
