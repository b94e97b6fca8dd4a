/* driver.c: lab 25's plug-in: data-parallel training with the student's compressed exchange.
 *
 *   lab25 train [--methods none,fp16,bf16,topk:0.05,sign] [--steps 300]   (cpu, 1-8 ranks)
 *
 * Every rank holds a shard of a seeded synthetic data set and the same
 * logistic-regression model. At every step the harness computes the rank's
 * gradient and calls the student's exchange; then it checks what came back:
 * the rank's message is the exact encoding of gradient + residual, the new
 * residual is what the message did not carry (error feedback), the student's
 * result is the mean of every rank's decoded message (the harness gathers the
 * messages itself), and the bytes the trace shows on the wire are p - 1
 * messages each way. The model is updated with the harness's own decoding of
 * the messages, and its loss is compared with uncompressed training from the
 * same start on the same data.
 *
 * This file holds the student's entry and the lab's table; the train mode is in
 * harness_train.c, one step's call and checks in harness_exchange.c, the harness's own
 * codecs in harness_codec.c and the data set and model in harness_model.c
 * (harness_lab25.h).
 */
#include "harness/harness.h"
#include "lab25.h"

#ifdef CL_STUDENT_SIDE

static cl_result exchange(cl_comm *c, void *args) { return lab25_exchange(c, args); }

CL_STUDENT_ENTRIES({"exchange", exchange});

#else

#include "harness_lab25.h"

const cl_lab cl_lab_def = {
    .name = "lab25",
    .title = "梯度压缩: FP16/BF16, top-k and sign with error feedback",
    .modes = (const cl_mode[]){{.name = "train",
                                .help = "data-parallel training with your compressed exchange",
                                .ranks = train,
                                .backends = "cpu"},
                               {0}},
    .options = (const cl_option[]){{"methods",
                                    "comma-separated: none, fp16, bf16, topk:DENSITY, "
                                    "sign",
                                    "none,fp16,bf16,topk:0.05,sign"},
                                   {"steps", "training steps per method", "300"},
                                   {0}},
};

#endif
