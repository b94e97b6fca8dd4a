/* harness_fabric.c: lab 19's fabric files, read into the struct the student's functions get. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab19_harness.h"

static int find_switch(const lab19_fabric *f, const char *name)
{
    for (int i = 0; i < f->nswitches; i++)
        if (strcmp(f->sw[i].name, name) == 0)
            return i;
    return -1;
}

static int valid_name(const char *s)
{
    if (!*s || strlen(s) >= LAB19_NAME)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

#define BAD(...)                                                                                   \
    do {                                                                                           \
        char why_[200];                                                                            \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                                  \
        cl_set_error("%s:%d: %s", path, line, why_);                                               \
        rc = CL_ERR_PARSE;                                                                         \
        goto done;                                                                                 \
    } while (0)

cl_result lab19_read_fabric(const char *path, lab19_fabric *f)
{
    memset(f, 0, sizeof *f);
    FILE *in = fopen(path, "r");
    if (!in) {
        cl_set_error("%s: %s", path, strerror(errno));
        return CL_ERR_IO;
    }
    char buf[512];
    int line = 0, tops = 0;
    cl_result rc = CL_OK;
    while (fgets(buf, sizeof buf, in)) {
        line++;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char a[64], b[64], c[64], d[64], e[64], g[64], h[64];
        int n = sscanf(buf, "%63s %63s %63s %63s %63s %63s %63s", a, b, c, d, e, g, h);
        if (n <= 0)
            continue;
        if (strcmp(a, "gpus_per_node") == 0 && n == 2) {
            f->gpus_per_node = atoi(b);
            if (f->gpus_per_node < 1 || f->gpus_per_node > 64)
                BAD("gpus_per_node %s: 1 to 64", b);
        } else if (strcmp(a, "node_gbps") == 0 && n == 2) {
            f->node_gbps = atof(b);
            if (!(f->node_gbps > 0))
                BAD("node_gbps %s: a positive number", b);
        } else if (strcmp(a, "switch") == 0 && n == 7 && strcmp(c, "level") == 0 &&
                   strcmp(e, "parent") == 0) {
            /* switch NAME level L parent P up_gbps U: seven words and the eighth */
            double up = 0;
            char *u = strstr(buf, "up_gbps");
            if (!u || sscanf(u, "up_gbps %lf", &up) != 1 || up < 0)
                BAD("switch %s: up_gbps missing or negative", b);
            if (f->nswitches == LAB19_MAX_SWITCHES)
                BAD("more than %d switches", LAB19_MAX_SWITCHES);
            if (!valid_name(b) || find_switch(f, b) >= 0)
                BAD("switch name '%s' is invalid or used twice", b);
            lab19_switch *s = &f->sw[f->nswitches];
            memcpy(s->name, b, strlen(b) + 1); /* valid_name: it fits */
            s->level = atoi(d);
            s->up_gbps = up;
            if (strcmp(g, "-") == 0) {
                s->parent = -1;
                tops++;
            } else {
                s->parent = find_switch(f, g);
                if (s->parent < 0)
                    BAD("switch %s: parent %s is not defined above it", b, g);
                if (f->sw[s->parent].level != s->level + 1)
                    BAD("switch %s (level %d): its parent %s is not one level up", b, s->level, g);
                if (!(up > 0))
                    BAD("switch %s: up_gbps must be positive below the top", b);
            }
            if (s->level < 1 || s->level > 8)
                BAD("switch %s: level %d (1 to 8)", b, s->level);
            f->nswitches++;
        } else if (strcmp(a, "node") == 0 && n == 3) {
            if (f->nnodes == LAB19_MAX_NODES)
                BAD("more than %d nodes", LAB19_MAX_NODES);
            int leaf = find_switch(f, c);
            if (!valid_name(b))
                BAD("node name '%s' is invalid", b);
            for (int i = 0; i < f->nnodes; i++)
                if (strcmp(f->node[i], b) == 0)
                    BAD("node %s listed twice", b);
            if (leaf < 0 || f->sw[leaf].level != 1)
                BAD("node %s: %s is not a leaf switch defined above", b, c);
            memcpy(f->node[f->nnodes], b, strlen(b) + 1); /* valid_name: it fits */
            f->leaf[f->nnodes++] = leaf;
        } else {
            BAD("expected gpus_per_node, node_gbps, switch or node lines");
        }
    }
    line = 0;
    if (tops != 1)
        BAD("the fabric has %d top switches, not one tree", tops);
    if (f->nnodes == 0 || f->gpus_per_node == 0 || f->node_gbps == 0)
        BAD("no nodes, gpus_per_node or node_gbps");
    for (int i = 0; i < f->nswitches; i++) {
        int below = 0;
        for (int j = 0; j < f->nswitches; j++)
            below += f->sw[j].parent == i;
        for (int j = 0; j < f->nnodes; j++)
            below += f->leaf[j] == i;
        if (!below)
            BAD("switch %s has nothing below it", f->sw[i].name);
    }
done:
    fclose(in);
    return rc;
}
