/* bundle.c: reading a recorded text file for the student's program, and splitting a
 * bundle into its sections (bundle.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boundary/arena.h"
#include "bundle.h"

cl_result cl_read_file(const char *path, size_t max, char **text, size_t *len)
{
    *text = NULL, *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        cl_set_error("%s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    cl_result rc = buf ? CL_OK : CL_ERR_NOMEM;
    for (size_t k; rc == CL_OK && (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n > max) {
            cl_set_error("%s: larger than %zu bytes", path, max);
            rc = CL_ERR_IO;
        } else if (n + 1 == cap) {
            char *b = realloc(buf, cap * 2);
            rc = b ? CL_OK : CL_ERR_NOMEM;
            buf = b ? b : buf, cap *= 2;
        }
    }
    if (rc == CL_OK && ferror(f)) {
        cl_set_error("%s: read error", path);
        rc = CL_ERR_IO;
    }
    fclose(f);
    if (rc != CL_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf, *len = n;
    return CL_OK;
}

cl_result cl_bundle_read(cl_case *c, const char *key, int max_mib, char **text)
{
    *text = NULL;
    const char *path;
    char *buf;
    size_t n;
    CL_CHECK(cl_case_str(c, key, &path));
    CL_CHECK(cl_read_file(path, (size_t)max_mib << 20, &buf, &n));
    if (memchr(buf, '\0', n)) {
        cl_set_error("%s: not a text file (a NUL byte)", path);
        free(buf);
        return CL_ERR_IO;
    }
    *text = cl_share(buf, n + 1);
    free(buf);
    return *text ? CL_OK : CL_ERR_IO;
}

/* Split text into form's sections (cl_bundle_load). */
static cl_result split(char *text, const cl_bundle_form *form, void *sections, int *n)
{
    *n = 0;
    char *p = text;
    int line = 1;
    while (*p) {
        char *eol = strchr(p, '\n');
        char *next = eol ? eol + 1 : p + strlen(p);
        if (strncmp(p, "### ", 4) == 0) {
            if (eol)
                *eol = '\0';
            if (*n > 0)
                p[-1] = '\0'; /* the previous section ends before this line */
            if (*n == form->max_sections) {
                cl_set_error("line %d: more than %d sections", line, form->max_sections);
                return CL_ERR_PARSE;
            }
            cl_result rc = form->section(sections, (*n)++, p, next, line);
            if (rc != CL_OK)
                return rc;
        } else if (*n == 0 && form->header && *p != '\n') {
            cl_set_error("line %d: text before the first '%s' line", line, form->header);
            return CL_ERR_PARSE;
        }
        p = next;
        line++;
    }
    return CL_OK;
}

cl_result cl_bundle_load(cl_case *c, const cl_bundle_form *form, void *sections, int *n,
                         char **text)
{
    cl_result rc = cl_bundle_read(c, form->key, form->max_mib, text);
    if (rc != CL_OK)
        return rc;
    rc = split(*text, form, sections, n);
    if (rc != CL_OK) {
        cl_host_free(*text);
        *text = NULL;
    }
    return rc;
}
