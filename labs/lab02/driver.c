/* driver.c: lab 02's harness: runs the student's parser and probe, writes JSON.
 *
 *   lab02 codes CODE...            how lab02_parse_code classifies each code
 *   lab02 split TEXT WANT          how lab02_split_codes splits one row's cells
 *   lab02 parse FILE [--json OUT]  lab02_parse_topo on FILE, as `commlab topo --json`
 *   lab02 probe [--json OUT]       lab02_probe_gpus on this machine
 *
 * Exit status: 0 ok, 2 malformed input or bad usage, 1 anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab02.h"

static cl_result run_codes(int n, char **codes, const char *json_path)
{
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_array_start(&j, NULL);
    for (int i = 0; i < n; i++) {
        cl_link link;
        memset(&link, 0, sizeof link);
        cl_clear_error();
        cl_result rc = lab02_parse_code(codes[i], &link);
        cl_json_object_start(&j, NULL);
        cl_json_string(&j, "code", codes[i]);
        cl_json_string(&j, "status", cl_result_str(rc));
        cl_json_string(&j, "kind", rc == CL_OK ? cl_link_kind_name(link.kind) : NULL);
        cl_json_int(&j, "nvlinks", rc == CL_OK ? link.nvlinks : 0);
        cl_json_string(&j, "stored", rc == CL_OK ? link.code : NULL);
        cl_json_object_end(&j);
    }
    cl_json_array_end(&j);
    return cl_json_close(&j);
}

static cl_result run_split(const char *text, const char *want_arg, const char *json_path)
{
    char codes[LAB02_MAX_CELLS][8];
    int want = atoi(want_arg);
    if (want < 0 || want > LAB02_MAX_CELLS) {
        cl_set_error("WANT must be 0..%d", LAB02_MAX_CELLS);
        return CL_ERR_INVALID;
    }
    memset(codes, 0, sizeof codes);
    const char *rest = NULL;
    cl_clear_error();
    int n = lab02_split_codes(text, codes, want, &rest);
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_object_start(&j, NULL);
    cl_json_int(&j, "count", n);
    cl_json_array_start(&j, "codes");
    for (int i = 0; i < n && i < want; i++)
        cl_json_string(&j, NULL, codes[i]);
    cl_json_array_end(&j);
    /* rest must point into text: anything else is reported as null */
    int inside = rest && rest >= text && rest <= text + strlen(text);
    cl_json_string(&j, "rest", n >= 0 && inside ? rest : NULL);
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

static cl_result run_parse(const char *path, const char *json_path)
{
    static cl_topo topo;
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("%s: cannot open", path);
        return CL_ERR_IO;
    }
    cl_clear_error();
    cl_result rc = lab02_parse_topo(in, path, &topo);
    fclose(in);
    if (rc != CL_OK)
        return rc; /* main prints the reason: "file:line: reason" */
    FILE *f = json_path ? fopen(json_path, "w") : stdout;
    if (!f) {
        cl_set_error("cannot write %s", json_path);
        return CL_ERR_IO;
    }
    rc = cl_topo_write_json(&topo, f);
    if (f != stdout && fclose(f) != 0 && rc == CL_OK)
        rc = CL_ERR_IO;
    return rc;
}

static cl_result run_probe(const char *json_path)
{
    static lab02_probe p;
    CL_CHECK(lab02_probe_gpus(&p));
    cl_json j;
    CL_CHECK(cl_json_open(&j, json_path));
    cl_json_object_start(&j, NULL);
    cl_json_int(&j, "ngpus", p.ngpus);
    cl_json_array_start(&j, "busid");
    for (int i = 0; i < p.ngpus; i++)
        cl_json_string(&j, NULL, p.busid[i]);
    cl_json_array_end(&j);
    cl_json_array_start(&j, "numa_node");
    for (int i = 0; i < p.ngpus; i++)
        cl_json_int(&j, NULL, p.numa_node[i]);
    cl_json_array_end(&j);
    const char *names[2] = {"can_access", "perf_rank"};
    for (int m = 0; m < 2; m++) {
        cl_json_array_start(&j, names[m]);
        for (int a = 0; a < p.ngpus; a++) {
            cl_json_array_start(&j, NULL);
            for (int b = 0; b < p.ngpus; b++)
                cl_json_int(&j, NULL, m == 0 ? p.can_access[a][b] : p.perf_rank[a][b]);
            cl_json_array_end(&j);
        }
        cl_json_array_end(&j);
    }
    cl_json_object_end(&j);
    return cl_json_close(&j);
}

int main(int argc, char **argv)
{
    const char *json_path = NULL;
    char *args[256];
    int nargs = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else if (nargs < 256)
            args[nargs++] = argv[i];
    }
    cl_result rc;
    if (argc >= 2 && strcmp(argv[1], "codes") == 0)
        rc = run_codes(nargs, args, json_path);
    else if (argc >= 2 && strcmp(argv[1], "split") == 0 && nargs == 2)
        rc = run_split(args[0], args[1], json_path);
    else if (argc >= 2 && strcmp(argv[1], "parse") == 0 && nargs == 1)
        rc = run_parse(args[0], json_path);
    else if (argc >= 2 && strcmp(argv[1], "probe") == 0 && nargs == 0)
        rc = run_probe(json_path);
    else {
        fprintf(stderr, "usage: lab02 codes CODE... | split TEXT WANT | parse FILE | probe  [--json OUT]\n");
        return 2;
    }
    if (rc != CL_OK)
        fprintf(stderr, "lab02: %s%s%s\n", cl_result_str(rc), cl_last_error()[0] ? ": " : "",
                cl_last_error());
    return cl_exit_status(rc);
}
