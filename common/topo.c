/* topo.c: the topology model shared by both parsers: legend codes, look-ups, loading, JSON. */
#include "topo.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static const char *const kind_names[] = {
    [CL_LINK_SELF] = "X",  [CL_LINK_NVLINK] = "NV", [CL_LINK_PIX] = "PIX", [CL_LINK_PXB] = "PXB",
    [CL_LINK_PHB] = "PHB", [CL_LINK_NODE] = "NODE", [CL_LINK_SYS] = "SYS", [CL_LINK_UNKNOWN] = "?",
};

const char *cl_link_kind_name(cl_link_kind kind)
{
    if (kind < CL_LINK_SELF || kind > CL_LINK_UNKNOWN)
        return "?";
    return kind_names[kind];
}

cl_result cl_link_from_code(const char *code, cl_link *out)
{
    static const cl_link_kind fixed[] = {CL_LINK_SELF, CL_LINK_PIX,  CL_LINK_PXB,
                                         CL_LINK_PHB,  CL_LINK_NODE, CL_LINK_SYS};
    if (code == NULL || out == NULL)
        return CL_ERR_INVALID;
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (strcmp(code, kind_names[fixed[i]]) == 0) {
            out->kind = fixed[i];
            snprintf(out->code, sizeof(out->code), "%s", code);
            return CL_OK;
        }
    }
    /* NV# : "NV" then 1 to 3 digits, no leading zero, at least 1. */
    if (code[0] == 'N' && code[1] == 'V' && isdigit((unsigned char)code[2]) && code[2] != '0') {
        size_t n = strlen(code + 2);
        if (n <= 3 && strspn(code + 2, "0123456789") == n) {
            out->kind = CL_LINK_NVLINK;
            out->nvlinks = atoi(code + 2);
            snprintf(out->code, sizeof(out->code), "%s", code);
            return CL_OK;
        }
    }
    out->kind = CL_LINK_UNKNOWN;
    return CL_ERR_PARSE;
}

int cl_topo_gpu_count(const cl_topo *t)
{
    int n = 0;
    for (int i = 0; i < t->ndevices; i++)
        n += t->dev[i].kind == CL_DEV_GPU;
    return n;
}

int cl_topo_find(const cl_topo *t, const char *name)
{
    for (int i = 0; i < t->ndevices; i++)
        if (strcmp(t->dev[i].name, name) == 0)
            return i;
    for (int i = 0; i < t->ndevices; i++)
        if (strcmp(t->dev[i].label, name) == 0)
            return i;
    return -1;
}

cl_result cl_topo_load(const char *path, cl_topo *out)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        cl_set_error("%s: cannot open: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    /* The format is chosen by the first non-blank character: '<' is XML. */
    int c;
    do {
        c = fgetc(f);
    } while (c != EOF && isspace(c));
    rewind(f);
    cl_result rc = c == '<' ? cl_topo_parse_nccl(f, path, out) : cl_topo_parse_smi(f, path, out);
    fclose(f);
    return rc;
}

cl_result cl_topo_write_json(const cl_topo *t, FILE *out)
{
    if (t == NULL || out == NULL || CL_NEVER(t->ndevices < 0 || t->ndevices > CL_TOPO_MAX_DEVICES))
        return CL_ERR_INVALID;
    int n = t->ndevices;
    fputs("{\"devices\": [", out);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", out);
        cl_json_write_string(out, t->dev[i].name);
    }
    fputs("], \"links\": [", out);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", [" : "[", out);
        for (int j = 0; j < n; j++) {
            if (j)
                fputs(", ", out);
            cl_json_write_string(out, t->link[i][j].code);
        }
        fputc(']', out);
    }
    fputs("], \"cpu_affinity\": {", out);
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (t->dev[i].cpu_affinity[0] == '\0')
            continue;
        if (!first)
            fputs(", ", out);
        first = 0;
        cl_json_write_string(out, t->dev[i].name);
        fputs(": ", out);
        cl_json_write_string(out, t->dev[i].cpu_affinity);
    }
    fputs("}, \"numa_affinity\": {", out);
    first = 1;
    for (int i = 0; i < n; i++) {
        if (!t->dev[i].numa_given)
            continue;
        if (!first)
            fputs(", ", out);
        first = 0;
        cl_json_write_string(out, t->dev[i].name);
        if (t->dev[i].numa_node >= 0)
            fprintf(out, ": %d", t->dev[i].numa_node);
        else
            fputs(": null", out);
    }
    fputs("}}\n", out);
    if (ferror(out)) {
        cl_set_error("writing topology JSON failed");
        return CL_ERR_IO;
    }
    return CL_OK;
}
