/* topo.c: `commlab topo FILE [--json]`, print a recorded server topology. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "topo.h"

static void usage(FILE *out)
{
    fputs("usage: commlab topo FILE [--json]\n"
          "  FILE    `nvidia-smi topo -m` text or NCCL topology XML (NCCL_TOPO_DUMP_FILE)\n"
          "  --json  print {\"devices\", \"links\", \"cpu_affinity\", \"numa_affinity\"}\n",
          out);
}

static const char *legend[][2] = {
    {"X", "self"},
    {"NV#", "a bonded set of # NVLinks"},
    {"PIX", "at most a single PCIe bridge"},
    {"PXB", "multiple PCIe bridges, no host bridge"},
    {"PHB", "a PCIe host bridge (the CPU)"},
    {"NODE", "host bridges within one NUMA node"},
    {"SYS", "the SMP interconnect between NUMA nodes"},
};

/* Print line without trailing blanks. */
static void put_trimmed(char *line, FILE *out)
{
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ')
        line[--n] = '\0';
    fprintf(out, "%s\n", line);
}

/* The matrix with aligned columns, then each device's affinity and the legend. */
static void print_table(const cl_topo *t, FILE *out)
{
    int w = 4;
    for (int i = 0; i < t->ndevices; i++) {
        int n = (int)strlen(t->dev[i].name);
        w = n > w ? n : w;
    }
    w += 2;
    size_t cap = (size_t)(t->ndevices + 1) * (size_t)w + CL_TOPO_CPUSET_LEN + 64, at = 0;
    char *line = malloc(cap);
    if (line == NULL)
        return;
    at = (size_t)snprintf(line, cap, "%-*s", w, "");
    for (int j = 0; j < t->ndevices; j++)
        at += (size_t)snprintf(line + at, cap - at, "%-*s", w, t->dev[j].name);
    snprintf(line + at, cap - at, "%-16s%s", "CPU Affinity", "NUMA Affinity");
    put_trimmed(line, out);
    int used[CL_LINK_UNKNOWN + 1] = {0};
    for (int i = 0; i < t->ndevices; i++) {
        const cl_device *d = &t->dev[i];
        at = (size_t)snprintf(line, cap, "%-*s", w, d->name);
        for (int j = 0; j < t->ndevices; j++) {
            at += (size_t)snprintf(line + at, cap - at, "%-*s", w, t->link[i][j].code);
            used[t->link[i][j].kind] = 1;
        }
        char numa[16] = "";
        if (d->numa_given && d->numa_node >= 0)
            snprintf(numa, sizeof(numa), "%d", d->numa_node);
        else if (d->numa_given)
            strcpy(numa, "N/A");
        snprintf(line + at, cap - at, "%-16s%s", d->cpu_affinity, numa);
        put_trimmed(line, out);
    }
    free(line);
    fputs("\nLegend:\n", out);
    for (size_t k = 0; k < sizeof(legend) / sizeof(legend[0]); k++) {
        cl_link code;
        if (strcmp(legend[k][0], "NV#") == 0)
            code.kind = CL_LINK_NVLINK;
        else
            cl_link_from_code(legend[k][0], &code);
        if (used[code.kind])
            fprintf(out, "  %-4s = %s\n", legend[k][0], legend[k][1]);
    }
    int nic_aliases = 0;
    for (int i = 0; i < t->ndevices; i++) {
        const cl_device *d = &t->dev[i];
        if (strcmp(d->name, d->label) != 0) {
            if (!nic_aliases++)
                fputs("\nNIC Legend (column labels of the input):\n", out);
            fprintf(out, "  %s: %s\n", d->label, d->name);
        }
    }
}

int cl_cli_topo(int argc, char **argv)
{
    const char *file = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "commlab topo: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (file == NULL) {
            file = argv[i];
        } else {
            fprintf(stderr, "commlab topo: more than one FILE ('%s', '%s')\n", file, argv[i]);
            return 2;
        }
    }
    if (file == NULL) {
        usage(stderr);
        return 2;
    }
    cl_topo *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        fputs("commlab topo: out of memory\n", stderr);
        return 1;
    }
    cl_result rc = cl_topo_load(file, t);
    if (rc != CL_OK) {
        const char *why = cl_last_error();
        fprintf(stderr, "%s\n", why[0] ? why : cl_result_str(rc));
        free(t);
        return rc == CL_ERR_IO || rc == CL_ERR_PARSE ? 2 : cl_exit_status(rc);
    }
    if (json)
        rc = cl_topo_write_json(t, stdout);
    else
        print_table(t, stdout);
    free(t);
    if (rc != CL_OK) {
        fprintf(stderr, "commlab topo: %s\n", cl_last_error());
        return 1;
    }
    return 0;
}
