/* harness_device.c: lab 11's modelled GPU, the lab's operation LAB11_OP_COMPUTE: each rank's
 * kernels in order, a part lasting layer_s / parts x S / (S - k), k the channels of the
 * rank's transfers in flight when it starts, with the time and SMs it took recorded for the
 * step's columns ("sim": a layer's gradient appears when its kernel ends).
 */
#include "boundary/inspect.h"
#include "harness/overlap.h"
#include "lab11_harness.h"
#include "lab11_ops.h"

device dev[MAX_RANKS];

void device_reset(int rank, const lab11_model *m, float *grads, int fill, uint64_t seed)
{
    dev[rank] =
        (device){.m = m, .next_layer = m->layers - 1, .grads = grads, .fill = fill, .seed = seed};
}

/* Offset (floats) of layer l's gradient: layers-1 comes first. */
static size_t layer_offset(const lab11_model *m, int l)
{
    double off = 0;
    for (int j = m->layers - 1; j > l; j--)
        off += m->layer_bytes[j];
    return (size_t)(off / sizeof(float));
}

cl_result lab_op(cl_run *run, cl_comm *c, int code, void *args, size_t bytes)
{
    (void)run;
    lab11_compute_args *a = args;
    int r = cl_comm_rank(c);
    device *d = r < MAX_RANKS ? &dev[r] : NULL;
    if (code != LAB11_OP_COMPUTE || bytes != sizeof *a || !d || !d->m) {
        cl_set_error("lab 11 has no such operation here");
        return CL_ERR_INVALID;
    }
    if (a->layer != d->next_layer || a->part != d->next_part || a->parts < 1 ||
        a->parts > LAB11_MAX_PARTS || (a->part > 0 && a->parts != d->parts)) {
        cl_set_error("kernel part %d/%d of layer %d out of order: next is part %d of layer %d",
                     a->part, a->parts, a->layer, d->next_part, d->next_layer);
        return CL_ERR_INVALID;
    }
    d->parts = a->parts;
    int sms = d->m->sms, k = (cl_student_in_flight(c) + 1) / 2;
    k = k > sms - 1 ? sms - 1 : k;
    double s = d->m->layer_s[a->layer] / a->parts * sms / (sms - k);
    d->kernel_s += s, d->sm_s += s * k;
    CL_CHECK(cl_overlap_busy_until(c, cl_comm_time(c) + s));
    d->last_end = cl_comm_time(c);
    if (++d->next_part < a->parts)
        return CL_OK;
    if (d->fill) { /* the layer's gradients exist from now on */
        size_t off = layer_offset(d->m, a->layer);
        CL_CHECK(cl_fill(c, d->grads + off, (size_t)(d->m->layer_bytes[a->layer] / sizeof(float)),
                         CL_FLOAT32, CL_SUM, d->seed, r, off));
    }
    d->next_part = 0;
    d->next_layer--;
    return CL_OK;
}
