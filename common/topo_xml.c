/* topo_xml.c: parser for NCCL's topology XML (NCCL_TOPO_DUMP_FILE, <system version="1">).
 *
 * A small XML reader (elements, attributes, comments, <?xml?>; text is
 * ignored) builds a tree with line numbers, then the tree becomes the same
 * model as `nvidia-smi topo -m`:
 *
 * - devices: every <gpu> as GPU<dev> (sorted by dev), then every <net> as its
 *   name (sorted by the net's dev when all have one, else in file order);
 *   busid is the enclosing <pci>'s busid.
 * - GPU-GPU: <nvlink tclass="0x030200"> counts to the peer's busid give NV#
 *   (direct links, DGX-1 style). GPUs with links to NVSwitches
 *   (tclass 0x068000) reach every other such GPU through the switches and
 *   are printed as NV<their total switch links>, as nvidia-smi prints them
 *   (NV12 on A100, NV18 on H100). Otherwise the PCIe class below.
 * - PCIe classes from the tree: different <cpu> -> SYS; same <cpu> with no
 *   common bridge -> PHB (NCCL has no NODE: one CPU node per NUMA domain);
 *   otherwise the number of bridge <pci> elements on the path (those above
 *   each device up to and including the deepest common one): 1 -> PIX,
 *   more -> PXB. Two nets of one PCI function (dual-port NIC) are PIX.
 * - cpu_affinity from the <cpu affinity> mask (comma-separated 32-bit hex
 *   words, most significant first) as a cpu list; numa_node from numaid
 *   (-1, as in VMs, is given as JSON null).
 * Elements the model does not use (pcilink, c2c, ...) are skipped; <pci>
 * leaves with neither <gpu> nor <nic> (partial cloud files) give no device.
 */
#include "topo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define XML_MAX_ATTRS        32
#define XML_MAX_DEPTH        64
#define NCCL_TCLASS_GPU      0x030200
#define NCCL_TCLASS_NVSWITCH 0x068000

typedef struct xml_node {
    char *name;
    int line;
    int nattr;
    char *attr_name[XML_MAX_ATTRS];
    char *attr_value[XML_MAX_ATTRS];
    struct xml_node *parent, *first_child, *last_child, *next;
} xml_node;

typedef struct xml_reader {
    const char *path;
    const char *p, *end;
    int line;
} xml_reader;

static void xml_free(xml_node *n)
{
    while (n != NULL) {
        xml_node *next = n->next;
        xml_free(n->first_child);
        free(n->name);
        for (int i = 0; i < n->nattr; i++) {
            free(n->attr_name[i]);
            free(n->attr_value[i]);
        }
        free(n);
        n = next;
    }
}

static const char *xml_attr(const xml_node *n, const char *name)
{
    for (int i = 0; i < n->nattr; i++)
        if (strcmp(n->attr_name[i], name) == 0)
            return n->attr_value[i];
    return NULL;
}

static cl_result xml_error(const xml_reader *r, int line, const char *what, const char *arg)
{
    cl_set_error("%s:%d: %s%s", r->path, line, what, arg ? arg : "");
    return CL_ERR_PARSE;
}

static void advance(xml_reader *r, size_t n)
{
    for (size_t i = 0; i < n && r->p < r->end; i++, r->p++)
        if (*r->p == '\n')
            r->line++;
}

static void skip_space(xml_reader *r)
{
    while (r->p < r->end && isspace((unsigned char)*r->p))
        advance(r, 1);
}

static int starts(const xml_reader *r, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(r->end - r->p) >= n && memcmp(r->p, s, n) == 0;
}

/* Skip past the terminator term; error if the file ends first. */
static cl_result skip_past(xml_reader *r, const char *term, const char *what)
{
    int line = r->line;
    while (r->p < r->end && !starts(r, term))
        advance(r, 1);
    if (r->p >= r->end)
        return xml_error(r, line, what, " is not terminated");
    advance(r, strlen(term));
    return CL_OK;
}

static int name_char(int c) { return isalnum(c) || c == '_' || c == '-' || c == ':' || c == '.'; }

static char *read_name(xml_reader *r)
{
    const char *s = r->p;
    while (r->p < r->end && name_char((unsigned char)*r->p))
        r->p++;
    if (r->p == s)
        return NULL;
    return strndup(s, (size_t)(r->p - s));
}

/* Decode the five predefined entities in place. */
static void decode_entities(char *s)
{
    static const struct {
        const char *ent;
        char ch;
    } ents[] = {{"&quot;", '"'}, {"&apos;", '\''}, {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}};
    char *w = s;
    for (const char *q = s; *q;) {
        size_t i, n = sizeof(ents) / sizeof(ents[0]);
        for (i = 0; i < n; i++)
            if (strncmp(q, ents[i].ent, strlen(ents[i].ent)) == 0)
                break;
        if (i < n) {
            *w++ = ents[i].ch;
            q += strlen(ents[i].ent);
        } else {
            *w++ = *q++;
        }
    }
    *w = '\0';
}

/* Read one start tag after '<' into a new node; *closed is set for "/>". */
static cl_result read_start_tag(xml_reader *r, xml_node **out, int *closed)
{
    int line = r->line;
    xml_node *n = calloc(1, sizeof(*n));
    if (n == NULL)
        return CL_ERR_NOMEM;
    n->line = line;
    n->name = read_name(r);
    if (n->name == NULL) {
        free(n);
        return xml_error(r, line, "expected an element name after '<'", NULL);
    }
    for (;;) {
        skip_space(r);
        if (r->p >= r->end) {
            xml_free(n);
            return xml_error(r, line, "tag is not terminated", NULL);
        }
        if (starts(r, "/>") || *r->p == '>') {
            *closed = *r->p == '/';
            advance(r, *closed ? 2 : 1);
            *out = n;
            return CL_OK;
        }
        int aline = r->line;
        char *an = read_name(r);
        if (an == NULL) {
            char bad[2] = {*r->p, '\0'};
            xml_free(n);
            return xml_error(r, aline, "unexpected character in tag: ", bad);
        }
        skip_space(r);
        if (r->p >= r->end || *r->p != '=') {
            xml_error(r, aline, "attribute without '=': ", an);
            free(an);
            xml_free(n);
            return CL_ERR_PARSE;
        }
        advance(r, 1);
        skip_space(r);
        if (r->p >= r->end || (*r->p != '"' && *r->p != '\'')) {
            xml_error(r, aline, "attribute value must be quoted: ", an);
            free(an);
            xml_free(n);
            return CL_ERR_PARSE;
        }
        char q = *r->p;
        advance(r, 1);
        const char *vs = r->p;
        while (r->p < r->end && *r->p != q && *r->p != '<')
            advance(r, 1);
        if (r->p >= r->end || *r->p != q) {
            xml_error(r, aline, "unterminated value of attribute ", an);
            free(an);
            xml_free(n);
            return CL_ERR_PARSE;
        }
        char *av = strndup(vs, (size_t)(r->p - vs));
        advance(r, 1);
        if (n->nattr == XML_MAX_ATTRS || av == NULL) {
            free(an);
            free(av);
            xml_free(n);
            return av == NULL ? CL_ERR_NOMEM : xml_error(r, aline, "too many attributes", NULL);
        }
        decode_entities(av);
        n->attr_name[n->nattr] = an;
        n->attr_value[n->nattr++] = av;
    }
}

/* Read the whole document into a tree; *root is its single root element. */
static cl_result xml_parse(xml_reader *r, xml_node **root)
{
    xml_node *stack[XML_MAX_DEPTH];
    int depth = 0;
    cl_result rc = CL_OK;
    *root = NULL;
    while (rc == CL_OK) {
        while (r->p < r->end && *r->p != '<') {
            if (!isspace((unsigned char)*r->p) && depth == 0) {
                rc = xml_error(r, r->line, "text outside the root element", NULL);
                break;
            }
            advance(r, 1);
        }
        if (rc != CL_OK || r->p >= r->end)
            break;
        if (starts(r, "<?")) {
            rc = skip_past(r, "?>", "<?...?>");
        } else if (starts(r, "<!--")) {
            rc = skip_past(r, "-->", "comment");
        } else if (starts(r, "<!")) {
            rc = skip_past(r, ">", "<!...>");
        } else if (starts(r, "</")) {
            int line = r->line;
            advance(r, 2);
            char *name = read_name(r);
            skip_space(r);
            if (name == NULL || r->p >= r->end || *r->p != '>') {
                free(name);
                rc = xml_error(r, line, "malformed end tag", NULL);
                break;
            }
            advance(r, 1);
            if (depth == 0) {
                rc = xml_error(r, line, "end tag without start tag: </", name);
            } else if (strcmp(name, stack[depth - 1]->name) != 0) {
                cl_set_error("%s:%d: </%s> closes <%s> opened at line %d", r->path, line, name,
                             stack[depth - 1]->name, stack[depth - 1]->line);
                rc = CL_ERR_PARSE;
            } else {
                depth--;
            }
            free(name);
        } else {
            advance(r, 1);
            xml_node *n = NULL;
            int closed = 0;
            rc = read_start_tag(r, &n, &closed);
            if (rc != CL_OK)
                break;
            if (depth == 0) {
                if (*root != NULL) {
                    xml_free(n);
                    rc = xml_error(r, r->line, "a second root element", NULL);
                    break;
                }
                *root = n;
            } else {
                xml_node *parent = stack[depth - 1];
                n->parent = parent;
                if (parent->last_child)
                    parent->last_child->next = n;
                else
                    parent->first_child = n;
                parent->last_child = n;
            }
            if (!closed) {
                if (depth == XML_MAX_DEPTH) {
                    rc = xml_error(r, n->line, "elements nested too deeply", NULL);
                    break;
                }
                stack[depth++] = n;
            }
        }
    }
    if (rc == CL_OK && depth > 0) {
        int last = r->line; /* the last line, not the empty one after the final newline */
        if (r->p == r->end && r->line > 1 && r->end[-1] == '\n')
            last--;
        cl_set_error("%s:%d: <%s> opened at line %d is never closed", r->path, last,
                     stack[depth - 1]->name, stack[depth - 1]->line);
        rc = CL_ERR_PARSE;
    }
    if (rc == CL_OK && *root == NULL)
        rc = xml_error(r, r->line, "no XML element found", NULL);
    if (rc != CL_OK) {
        xml_free(*root);
        *root = NULL;
    }
    return rc;
}

/* ---- from the tree to the model ---- */

#define MAX_CHAIN 16

typedef struct xdev {
    cl_device_kind kind;
    int dev;   /* <gpu dev> or <net dev>; -1 if absent */
    int order; /* file order */
    int cpu;   /* index of the enclosing <cpu> */
    int depth; /* number of bridge <pci> above the device */
    const xml_node *chain[MAX_CHAIN];
    const xml_node *gpu; /* the <gpu> element, for its <nvlink>s */
    const xml_node *elem;
    char name[CL_TOPO_NAME_LEN];
    char busid[16];
} xdev;

typedef struct xcpu {
    char cpus[CL_TOPO_CPUSET_LEN];
    int numa, numa_given;
} xcpu;

typedef struct xwalk {
    const char *path;
    xdev devs[CL_TOPO_MAX_DEVICES];
    int ndevs;
    xcpu cpus[CL_TOPO_MAX_DEVICES];
    int ncpus;
} xwalk;

static cl_result walk_error(const xwalk *w, const xml_node *n, const char *fmt, const char *arg)
{
    char msg[160];
    snprintf(msg, sizeof(msg), fmt, arg ? arg : "");
    cl_set_error("%s:%d: %s", w->path, n->line, msg);
    return CL_ERR_PARSE;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    if (s == NULL || *s == '\0')
        return 0;
    long v = strtol(s, &end, 0);
    if (*end != '\0' || v < -1000000 || v > 1000000)
        return 0;
    *out = (int)v;
    return 1;
}

static cl_result add_dev(xwalk *w, const xml_node *elem, cl_device_kind kind, int cpu,
                         const xml_node *const *chain, int depth, const char *busid, xdev **out)
{
    if (w->ndevs == CL_TOPO_MAX_DEVICES)
        return walk_error(w, elem, "more than 64 devices%s", NULL);
    xdev *d = &w->devs[w->ndevs];
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->order = w->ndevs++;
    d->cpu = cpu;
    d->depth = depth;
    d->elem = elem;
    d->dev = -1;
    memcpy(d->chain, chain, (size_t)depth * sizeof(chain[0]));
    if (busid != NULL) {
        if (strlen(busid) >= sizeof(d->busid))
            return walk_error(w, elem, "busid '%s' too long", busid);
        for (size_t i = 0; busid[i]; i++)
            d->busid[i] = (char)tolower((unsigned char)busid[i]);
    }
    *out = d;
    return CL_OK;
}

/* Every <net> of a <nic> element becomes a NIC device. */
static cl_result add_nets(xwalk *w, const xml_node *nic, int cpu, const xml_node *const *chain,
                          int depth, const char *busid)
{
    for (const xml_node *c = nic->first_child; c; c = c->next) {
        if (strcmp(c->name, "net") != 0)
            continue;
        const char *name = xml_attr(c, "name");
        if (name == NULL || *name == '\0')
            return walk_error(w, c, "<net> without a name attribute%s", NULL);
        if (strlen(name) >= CL_TOPO_NAME_LEN)
            return walk_error(w, c, "net name '%s' too long", name);
        xdev *d;
        cl_result rc = add_dev(w, c, CL_DEV_NIC, cpu, chain, depth, busid, &d);
        if (rc != CL_OK)
            return rc;
        strcpy(d->name, name);
        const char *dev = xml_attr(c, "dev");
        if (dev != NULL && !parse_int(dev, &d->dev))
            return walk_error(w, c, "bad net dev '%s'", dev);
    }
    return CL_OK;
}

/* Walk the children of a <cpu> or bridge <pci>; chain holds the bridges above.
 * The <gpu> and <nic> children of a <pci> belong to that <pci> and are read
 * with it, so only <pci> children (and a <nic> right under <cpu>) are walked. */
static cl_result walk(xwalk *w, const xml_node *parent, int cpu, const xml_node **chain, int depth)
{
    for (const xml_node *c = parent->first_child; c; c = c->next) {
        cl_result rc = CL_OK;
        if (strcmp(c->name, "nic") == 0 && strcmp(parent->name, "cpu") == 0) {
            rc = add_nets(w, c, cpu, chain, depth, NULL); /* a NIC with no PCI element */
        } else if (strcmp(c->name, "pci") == 0) {
            const char *busid = xml_attr(c, "busid");
            int is_bridge = 0;
            for (const xml_node *g = c->first_child; g && rc == CL_OK; g = g->next) {
                if (strcmp(g->name, "gpu") == 0) {
                    const char *dev = xml_attr(g, "dev");
                    xdev *d;
                    rc = add_dev(w, g, CL_DEV_GPU, cpu, chain, depth, busid, &d);
                    if (rc == CL_OK && (dev == NULL || !parse_int(dev, &d->dev) || d->dev < 0))
                        rc = walk_error(w, g, "<gpu> needs a dev attribute >= 0%s", NULL);
                    if (rc == CL_OK) {
                        d->gpu = g;
                        snprintf(d->name, sizeof(d->name), "GPU%d", d->dev);
                    }
                } else if (strcmp(g->name, "nic") == 0) {
                    rc = add_nets(w, g, cpu, chain, depth, busid);
                } else if (strcmp(g->name, "pci") == 0) {
                    is_bridge = 1;
                }
            }
            if (rc == CL_OK && is_bridge) {
                if (depth == MAX_CHAIN)
                    return walk_error(w, c, "PCI tree deeper than 16 bridges%s", NULL);
                chain[depth] = c;
                rc = walk(w, c, cpu, chain, depth + 1);
            }
        }
        if (rc != CL_OK)
            return rc;
    }
    return CL_OK;
}

/* "00000000,ffffffff,00000000,ffffffff" -> "0-31,64-95". */
static cl_result mask_to_cpulist(const xwalk *w, const xml_node *n, const char *mask, char *out,
                                 size_t cap)
{
    int nwords = 1;
    for (const char *q = mask; *q; q++) {
        if (*q == ',')
            nwords++;
        else if (!isxdigit((unsigned char)*q))
            return walk_error(w, n, "bad affinity mask '%s'", mask);
    }
    unsigned long *words = calloc((size_t)nwords, sizeof(*words));
    if (words == NULL)
        return CL_ERR_NOMEM;
    const char *q = mask;
    for (int i = nwords - 1; i >= 0; i--) { /* the first word is the most significant */
        size_t len = strcspn(q, ",");
        if (len == 0 || len > 8) {
            free(words);
            return walk_error(w, n, "bad affinity mask '%s'", mask);
        }
        words[i] = strtoul(q, NULL, 16);
        q += len + (q[len] == ',');
    }
    size_t used = 0;
    out[0] = '\0';
    int nbits = 32 * nwords;
    for (int b = 0; b < nbits;) {
        if (!((words[b / 32] >> (b % 32)) & 1)) {
            b++;
            continue;
        }
        int e = b;
        while (e + 1 < nbits && ((words[(e + 1) / 32] >> ((e + 1) % 32)) & 1))
            e++;
        int k = e > b ? snprintf(out + used, cap - used, "%s%d-%d", used ? "," : "", b, e)
                      : snprintf(out + used, cap - used, "%s%d", used ? "," : "", b);
        if (k < 0 || (size_t)k >= cap - used) {
            free(words);
            return walk_error(w, n, "cpu list of mask '%s' too long", mask);
        }
        used += (size_t)k;
        b = e + 1;
    }
    free(words);
    return CL_OK;
}

/* Sum of nvlink counts of gpu to target (or to switches when target is NULL). */
static cl_result nvlink_count(const xwalk *w, const xdev *a, const char *target, int *out)
{
    *out = 0;
    if (a->gpu == NULL)
        return CL_OK;
    for (const xml_node *l = a->gpu->first_child; l; l = l->next) {
        if (strcmp(l->name, "nvlink") != 0)
            continue;
        int count, tclass;
        const char *t = xml_attr(l, "target");
        if (!parse_int(xml_attr(l, "count"), &count) || count < 0)
            return walk_error(w, l, "<nvlink> needs a count%s", NULL);
        if (!parse_int(xml_attr(l, "tclass"), &tclass))
            return walk_error(w, l, "<nvlink> needs a tclass%s", NULL);
        if (target == NULL ? tclass == NCCL_TCLASS_NVSWITCH
                           : tclass == NCCL_TCLASS_GPU && t && strcasecmp(t, target) == 0)
            *out += count;
    }
    return CL_OK;
}

static cl_link_kind pcie_class(const xdev *a, const xdev *b)
{
    if (a->cpu != b->cpu)
        return CL_LINK_SYS;
    if (a->busid[0] && strcmp(a->busid, b->busid) == 0)
        return CL_LINK_PIX;
    int l = 0;
    while (l < a->depth && l < b->depth && a->chain[l] == b->chain[l])
        l++;
    if (l == 0)
        return CL_LINK_PHB;
    int bridges = (a->depth - l) + (b->depth - l) + 1;
    return bridges == 1 ? CL_LINK_PIX : CL_LINK_PXB;
}

static int dev_cmp(const void *pa, const void *pb)
{
    const xdev *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind == CL_DEV_GPU ? -1 : 1;
    if (a->dev != b->dev && a->dev >= 0 && b->dev >= 0)
        return a->dev < b->dev ? -1 : 1;
    return a->order - b->order;
}

static cl_result build_model(xwalk *w, const xml_node *root, cl_topo *out)
{
    const char *version = xml_attr(root, "version");
    if (strcmp(root->name, "system") != 0 || version == NULL || strcmp(version, "1") != 0)
        return walk_error(w, root, "expected <system version=\"1\"> as the root element%s", NULL);
    for (const xml_node *c = root->first_child; c; c = c->next) {
        if (strcmp(c->name, "cpu") != 0)
            continue;
        if (w->ncpus == CL_TOPO_MAX_DEVICES)
            return walk_error(w, c, "too many <cpu> elements%s", NULL);
        xcpu *cpu = &w->cpus[w->ncpus];
        const char *numa = xml_attr(c, "numaid"), *mask = xml_attr(c, "affinity");
        cpu->numa = -1;
        if (numa != NULL) {
            if (!parse_int(numa, &cpu->numa) || cpu->numa < -1)
                return walk_error(w, c, "bad numaid '%s'", numa);
            cpu->numa_given = 1;
        }
        if (mask != NULL) {
            cl_result rc = mask_to_cpulist(w, c, mask, cpu->cpus, sizeof(cpu->cpus));
            if (rc != CL_OK)
                return rc;
        }
        const xml_node *chain[MAX_CHAIN];
        cl_result rc = walk(w, c, w->ncpus++, chain, 0);
        if (rc != CL_OK)
            return rc;
    }
    if (w->ndevs == 0)
        return walk_error(w, root, "no <gpu> or <net> element in the topology%s", NULL);

    /* NICs keep file order unless every one has a dev. */
    int all_dev = 1;
    for (int i = 0; i < w->ndevs; i++)
        if (w->devs[i].kind == CL_DEV_NIC && w->devs[i].dev < 0)
            all_dev = 0;
    if (!all_dev)
        for (int i = 0; i < w->ndevs; i++)
            if (w->devs[i].kind == CL_DEV_NIC)
                w->devs[i].dev = -1;
    qsort(w->devs, (size_t)w->ndevs, sizeof(w->devs[0]), dev_cmp);
    for (int i = 1; i < w->ndevs; i++)
        if (strcmp(w->devs[i].name, w->devs[i - 1].name) == 0 ||
            (w->devs[i].kind == CL_DEV_GPU && w->devs[i].kind == w->devs[i - 1].kind &&
             w->devs[i].dev == w->devs[i - 1].dev))
            return walk_error(w, w->devs[i].elem, "device '%s' appears twice", w->devs[i].name);

    out->ndevices = w->ndevs;
    for (int i = 0; i < w->ndevs; i++) {
        const xdev *d = &w->devs[i];
        cl_device *o = &out->dev[i];
        strcpy(o->name, d->name);
        strcpy(o->label, d->name);
        o->kind = d->kind;
        strcpy(o->busid, d->busid);
        strcpy(o->cpu_affinity, w->cpus[d->cpu].cpus);
        o->numa_node = w->cpus[d->cpu].numa;
        o->numa_given = w->cpus[d->cpu].numa_given;
    }
    for (int i = 0; i < w->ndevs; i++) {
        for (int j = 0; j < w->ndevs; j++) {
            const xdev *a = &w->devs[i], *b = &w->devs[j];
            char code[8];
            int nv = 0;
            if (i == j) {
                strcpy(code, "X");
            } else {
                if (a->kind == CL_DEV_GPU && b->kind == CL_DEV_GPU) {
                    int sa, sb;
                    cl_result rc = nvlink_count(w, a, b->busid, &nv);
                    if (rc == CL_OK && nv == 0)
                        rc = nvlink_count(w, b, a->busid, &nv);
                    if (rc == CL_OK && nv == 0 && (rc = nvlink_count(w, a, NULL, &sa)) == CL_OK &&
                        (rc = nvlink_count(w, b, NULL, &sb)) == CL_OK && sa > 0 && sb > 0)
                        nv = sa < sb ? sa : sb;
                    if (rc != CL_OK)
                        return rc;
                }
                if (nv > 999)
                    return walk_error(w, a->elem, "more than 999 NVLinks%s", NULL);
                if (nv > 0)
                    snprintf(code, sizeof(code), "NV%d", nv);
                else
                    strcpy(code, cl_link_kind_name(pcie_class(a, b)));
            }
            if (CL_NEVER(cl_link_from_code(code, &out->link[i][j]) != CL_OK))
                return CL_ERR_INVALID;
        }
    }
    return CL_OK;
}

cl_result cl_topo_parse_nccl(FILE *f, const char *path, cl_topo *out)
{
    if (f == NULL || out == NULL)
        return CL_ERR_INVALID;
    if (path == NULL)
        path = "<input>";
    memset(out, 0, sizeof(*out));

    size_t cap = 1 << 16, len = 0, k;
    char *buf = malloc(cap);
    if (buf == NULL)
        return CL_ERR_NOMEM;
    while ((k = fread(buf + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL) {
                free(buf);
                return CL_ERR_NOMEM;
            }
            buf = nb;
        }
    }
    if (ferror(f)) {
        free(buf);
        cl_set_error("%s: read error", path);
        return CL_ERR_IO;
    }

    xml_reader r = {.path = path, .p = buf, .end = buf + len, .line = 1};
    xml_node *root = NULL;
    cl_result rc = xml_parse(&r, &root);
    if (rc == CL_OK) {
        xwalk *w = calloc(1, sizeof(*w));
        if (w == NULL) {
            rc = CL_ERR_NOMEM;
        } else {
            w->path = path;
            rc = build_model(w, root, out);
            free(w);
        }
    }
    xml_free(root);
    free(buf);
    if (rc != CL_OK)
        out->ndevices = 0;
    return rc;
}
