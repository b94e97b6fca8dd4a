/* harness_pcie.c: lab 12's modes on a recorded server: the student's path classes (paths),
 * NCCL's GDR/P2P decision for one path and setting (levels) and for every pair of a server
 * (decide, on the true classes), and the student's NIC of every GPU with the bandwidth all
 * GPUs get at once through it, beside NCCL's own choice (assign).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab12_harness.h"

static cl_result server_of(cl_case *c, server *s)
{
    const char *file;
    CL_CHECK(cl_case_str(c, "file", &file));
    return server_load(file, s);
}

static void col_matrix(cl_row *row, const char *key, const int8_t *m, int rows, int cols)
{
    long long v[MAXD * MAXD];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            v[i * cols + j] = m[i * MAXD + j];
    cl_col_ints(row, key, v, (size_t)rows * (size_t)cols);
}

cl_result paths_case(cl_case *c)
{
    server s;
    CL_CHECK(server_of(c, &s));
    paths_args *a = calloc(1, sizeof *a);
    if (!a) {
        server_free(&s);
        return CL_ERR_NOMEM;
    }
    a->ngpus = s.ngpus, a->nnics = s.nnics;
    memcpy(a->gpu, s.gpu, sizeof s.gpu);
    memcpy(a->nic, s.nic, sizeof s.nic);
    server_free(&s);
    cl_result rc = cl_case_call(c, "paths", a, sizeof *a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gpus", a->ngpus);
    cl_col_int(row, "nics", a->nnics);
    col_matrix(row, "gpu_nic", a->gpu_nic, a->ngpus, a->nnics);
    col_matrix(row, "gpu_gpu", a->gpu_gpu, a->ngpus, a->ngpus);
    free(a);
    return rc;
}

/* A setting's value: "-" unset, "x:HEX" hex-encoded bytes (values with blanks), else as is. */
static cl_result setting_value(cl_case *c, const char *key, char *out, int32_t *has)
{
    const char *v;
    *has = 0;
    out[0] = '\0';
    if (cl_case_str(c, key, &v) != CL_OK || strcmp(v, "-") == 0)
        return CL_OK;
    *has = 1;
    if (strncmp(v, "x:", 2) != 0) {
        snprintf(out, 64, "%s", v);
        return CL_OK;
    }
    size_t n = strlen(v + 2) / 2;
    for (size_t i = 0; i < n && i < 63; i++) {
        unsigned byte;
        if (sscanf(v + 2 + 2 * i, "%2x", &byte) != 1) {
            cl_set_error("%s: bad hex '%s'", key, v);
            return CL_ERR_INVALID;
        }
        out[i] = (char)byte;
        out[i + 1] = '\0';
    }
    return CL_OK;
}

static cl_result read_setting(cl_case *c, setting *s, int amd, int ngpus)
{
    memset(s, 0, sizeof *s);
    CL_CHECK(setting_value(c, "gdr", s->gdr, &s->has_gdr));
    CL_CHECK(setting_value(c, "p2p", s->p2p, &s->has_p2p));
    CL_CHECK(setting_value(c, "dis", s->dis, &s->has_dis));
    const char *v; /* optional: the server's own values otherwise */
    s->amd = cl_case_str(c, "amd", &v) == CL_OK ? atoi(v) : amd;
    s->ngpus = cl_case_str(c, "ngpus", &v) == CL_OK ? atoi(v) : ngpus;
    cl_clear_error();
    return CL_OK;
}

cl_result levels_case(cl_case *c)
{
    levels_args a;
    long long path;
    CL_CHECK(read_setting(c, &a.s, 0, 8));
    CL_CHECK(cl_case_int(c, "path", &path));
    a.path = (int32_t)path;
    cl_result rc = cl_case_call(c, "levels", &a, sizeof a);
    cl_row *row = cl_case_row(c);
    cl_col_int(row, "gdr_level", a.gdr_level);
    cl_col_int(row, "p2p_level", a.p2p_level);
    cl_col_int(row, "gdr", a.gdr);
    cl_col_int(row, "p2p", a.p2p);
    return rc;
}

cl_result decide_case(cl_case *c)
{
    server s;
    CL_CHECK(server_of(c, &s));
    decide_args *a = calloc(1, sizeof *a);
    cl_result rc = a ? read_setting(c, &a->s, s.amd, s.ngpus) : CL_ERR_NOMEM;
    if (rc == CL_OK) {
        a->ngpus = s.ngpus, a->nnics = s.nnics;
        /* The true classes: this decides, it does not classify (that is paths' job). */
        for (int g = 0; g < s.ngpus; g++) {
            for (int n = 0; n < s.nnics; n++)
                a->gpu_nic[g * MAXD + n] = (int8_t)ref_classify(&s.gpu[g], &s.nic[n]);
            for (int h = 0; h < s.ngpus; h++)
                a->gpu_gpu[g * MAXD + h] = (int8_t)ref_classify(&s.gpu[g], &s.gpu[h]);
        }
        rc = cl_case_call(c, "decide", a, sizeof *a);
        cl_row *row = cl_case_row(c);
        col_matrix(row, "gdr", a->gdr, s.ngpus, s.nnics);
        col_matrix(row, "p2p", a->p2p, s.ngpus, s.ngpus);
    }
    free(a);
    server_free(&s);
    return rc;
}

static uint64_t mix(uint64_t a, uint64_t b) { return cl_data_hash(a * 0x9E3779B97F4A7C15ULL ^ b); }

cl_result assign_case(cl_case *c)
{
    server s;
    long long seed;
    double nic_gbps, smp_gbps;
    CL_CHECK(cl_case_int(c, "seed", &seed));
    CL_CHECK(cl_case_num(c, "nic_gbps", &nic_gbps));
    CL_CHECK(cl_case_num(c, "smp_gbps", &smp_gbps));
    CL_CHECK(server_of(c, &s));
    if (s.ngpus < 1 || s.nnics < 1) {
        server_free(&s);
        cl_set_error("the server has %d GPUs and %d RDMA NICs", s.ngpus, s.nnics);
        return CL_ERR_INVALID;
    }
    /* The student sees the devices in an order of the seed's choosing. */
    int gperm[MAXD], nperm[MAXD];
    int count[2] = {s.ngpus, s.nnics}, *perm[2] = {gperm, nperm};
    uint64_t h = (uint64_t)seed;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < count[k]; i++)
            perm[k][i] = i;
        for (int i = count[k] - 1; i > 0; i--) {
            h = mix(h, (uint64_t)i);
            int j = (int)(h % (uint64_t)(i + 1)), t = perm[k][i];
            perm[k][i] = perm[k][j], perm[k][j] = t;
        }
    }
    assign_args *a = calloc(1, sizeof *a);
    if (!a) {
        server_free(&s);
        return CL_ERR_NOMEM;
    }
    a->ngpus = s.ngpus, a->nnics = s.nnics;
    for (int g = 0; g < s.ngpus; g++)
        a->gpu[g] = s.gpu[gperm[g]];
    for (int n = 0; n < s.nnics; n++)
        a->nic[n] = s.nic[nperm[n]];
    for (int g = 0; g < s.ngpus; g++)
        a->nic_of_gpu[g] = -1;
    cl_result rc = cl_case_call(c, "assign", a, sizeof *a);
    int mine[MAXD], ref[MAXD];
    long long shown[MAXD];
    for (int g = 0; g < s.ngpus; g++) { /* back in bus-id order */
        int n = a->nic_of_gpu[g];
        mine[gperm[g]] = n >= 0 && n < s.nnics ? nperm[n] : -1;
    }
    double got = 0, best = 0;
    int valid = 1;
    for (int g = 0; g < s.ngpus; g++)
        valid &= mine[g] >= 0, shown[g] = mine[g];
    ref_assign(&s, ref);
    cl_result mr = aggregate(&s, ref, nic_gbps, smp_gbps, &best);
    if (mr == CL_OK && valid && rc == CL_OK)
        mr = aggregate(&s, mine, nic_gbps, smp_gbps, &got);
    cl_row *row = cl_case_row(c);
    cl_col_ints(row, "nic_of_gpu", shown, (size_t)s.ngpus);
    cl_col_num(row, "gbps", got, "%.2f");
    cl_col_num(row, "reference_gbps", best, "%.2f");
    free(a);
    server_free(&s);
    if (rc == CL_OK && !valid) {
        cl_set_error("a GPU was given no NIC, or a NIC that does not exist");
        rc = CL_ERR_INVALID;
    }
    return rc != CL_OK ? rc : mr;
}
