/* harness_parse.c: lab 02's parse mode. The student's program opens no file: the harness
 * reads the case's file whole and shares its text; what the student's parse writes back is
 * bounded and terminated before it is read, each cell checked against its code, and
 * reported one row per device as `nvidia-smi topo -m` shows it. The probe mode reuses the
 * reader and the student's parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "harness/bundle.h"
#include "lab02_harness.h"

#define MAX_TEXT (1 << 20)

/* --- reading what the cases name --------------------------------------------------------- */

/* The whole of file `path` in *text (NUL-terminated, to free()); a reason otherwise. */
cl_result read_text(const char *path, char **text)
{
    size_t n;
    return cl_read_file(path, MAX_TEXT, text, &n);
}

/* --- 3: the parser -------------------------------------------------------------------------- */

static int valid_kind(int k) { return k >= CL_LINK_SELF && k <= CL_LINK_UNKNOWN; }

/* Make what the student's program wrote safe to read: bounds and terminators.
 * Returns 0, or -1 when the device count is out of range. */
static int sanitize(cl_topo *t)
{
    if (t->ndevices < 0 || t->ndevices > CL_TOPO_MAX_DEVICES)
        return -1;
    for (int i = 0; i < t->ndevices; i++) {
        cl_device *d = &t->dev[i];
        d->name[sizeof d->name - 1] = d->label[sizeof d->label - 1] = '\0';
        d->cpu_affinity[sizeof d->cpu_affinity - 1] = '\0';
        for (int j = 0; j < t->ndevices; j++)
            t->link[i][j].code[sizeof t->link[i][j].code - 1] = '\0';
    }
    return 0;
}

/* Cells of row i whose kind and NVLink count do not follow from their code. */
static int inconsistent_cells(const cl_topo *t, int i)
{
    int bad = 0;
    for (int j = 0; j < t->ndevices; j++) {
        const cl_link *l = &t->link[i][j];
        cl_link want;
        if (cl_link_from_code(l->code, &want) != CL_OK || !valid_kind(l->kind) ||
            l->kind != want.kind || l->nvlinks != want.nvlinks)
            bad++;
    }
    cl_clear_error();
    return bad;
}

static const char *device_kind(cl_device_kind k)
{
    return k == CL_DEV_GPU ? "gpu" : k == CL_DEV_NIC ? "nic" : "other";
}

/* The student's parse of text into *t (a copy in the harness's memory). */
cl_result student_parse(cl_case *c, const char *text, const char *path, cl_topo *t)
{
    parse_args a = {.text = cl_share(text, strlen(text) + 1),
                    .path = cl_share(path, strlen(path) + 1)};
    void *out = NULL;
    cl_result rc = a.text && a.path ? cl_host_alloc(sizeof *t, &out) : CL_ERR_NOMEM;
    if (rc == CL_OK) {
        memset(out, 0, sizeof *t);
        a.out = out;
        rc = cl_case_call(c, "parse", &a, sizeof a);
        memcpy(t, out, sizeof *t);
        if (rc == CL_OK && sanitize(t) != 0) {
            cl_set_error("your parse says %d devices (at most %d)", t->ndevices,
                         CL_TOPO_MAX_DEVICES);
            rc = CL_ERR_MISMATCH;
        }
    }
    cl_host_free(out);
    cl_host_free((void *)a.text);
    cl_host_free((void *)a.path);
    return rc;
}

/* One row per device of t: what the parse found, as `nvidia-smi topo -m` shows it. */
static void device_rows(cl_run *run, const char *file, const cl_topo *t)
{
    for (int i = 0; i < t->ndevices; i++) {
        const cl_device *d = &t->dev[i];
        char links[CL_TOPO_MAX_DEVICES * 9] = "", numa[16] = "";
        for (int j = 0; j < t->ndevices; j++) {
            strcat(links, j ? " " : "");
            strcat(links, t->link[i][j].code);
        }
        if (d->numa_given && d->numa_node >= 0)
            snprintf(numa, sizeof numa, "%d", d->numa_node);
        else if (d->numa_given)
            snprintf(numa, sizeof numa, "N/A");
        cl_row *row = cl_row_begin(run, NULL);
        cl_col_str(row, "file", file);
        cl_col_str(row, "device", d->name);
        cl_col_str(row, "label", d->label);
        cl_col_str(row, "kind", device_kind(d->kind));
        cl_col_str(row, "cpu_affinity", d->cpu_affinity);
        cl_col_str(row, "numa", numa);
        cl_col_int(row, "bad_cells", inconsistent_cells(t, i));
        cl_col_str(row, "links", links);
        cl_row_end(row);
    }
}

cl_result parse_case(cl_case *c)
{
    static cl_topo t;
    const char *path;
    char *text;
    CL_CHECK(cl_case_str(c, "file", &path));
    cl_col_str(cl_case_row(c), "file", path);
    CL_CHECK(read_text(path, &text));
    cl_result rc = student_parse(c, text, path, &t);
    free(text);
    cl_col_int(cl_case_row(c), "devices", rc == CL_OK ? t.ndevices : 0);
    if (rc == CL_OK)
        device_rows(cl_case_run(c), path, &t);
    return rc;
}
