/* topology.c: lab 10's given code: load a topology from XML text, find its GPUs and NICs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab10.h"

cl_result lab10_load_xml(const char *xml, size_t len, hwloc_topology_t *out)
{
    if (hwloc_topology_init(out) != 0) {
        cl_set_error("hwloc_topology_init failed");
        return CL_ERR_NOMEM;
    }
    hwloc_topology_set_io_types_filter(*out, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_set_xmlbuffer(*out, xml, (int)len) != 0 || hwloc_topology_load(*out) != 0) {
        cl_set_error("hwloc cannot load the XML topology (%zu bytes)", len);
        hwloc_topology_destroy(*out);
        return CL_ERR_PARSE;
    }
    return CL_OK;
}

static int busid_cmp(const void *a, const void *b)
{
    const struct hwloc_pcidev_attr_s *x = &(*(hwloc_obj_t const *)a)->attr->pcidev;
    const struct hwloc_pcidev_attr_s *y = &(*(hwloc_obj_t const *)b)->attr->pcidev;
    unsigned kx[4] = {x->domain, x->bus, x->dev, x->func};
    unsigned ky[4] = {y->domain, y->bus, y->dev, y->func};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* The OpenFabrics OS device below PCI function o, or NULL. */
static hwloc_obj_t fabric_of(hwloc_obj_t o)
{
    for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS)
            return c;
    return NULL;
}

cl_result lab10_find_devices(hwloc_topology_t t, lab10_devices *d)
{
    memset(d, 0, sizeof *d);
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o));) {
        unsigned cls = o->attr->pcidev.class_id;
        int gpu = o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300);
        int nic = fabric_of(o) != NULL;
        if ((gpu && d->ngpus == LAB10_MAX_DEVICES) || (nic && d->nnics == LAB10_MAX_DEVICES)) {
            cl_set_error("more than %d GPUs or NICs", LAB10_MAX_DEVICES);
            return CL_ERR_INVALID;
        }
        if (gpu)
            d->gpu[d->ngpus++] = o;
        if (nic)
            d->nic[d->nnics++] = o;
    }
    qsort(d->gpu, (size_t)d->ngpus, sizeof d->gpu[0], busid_cmp);
    qsort(d->nic, (size_t)d->nnics, sizeof d->nic[0], busid_cmp);
    for (int n = 0; n < d->nnics; n++)
        snprintf(d->nic_name[n], sizeof d->nic_name[n], "%s", fabric_of(d->nic[n])->name);
    return CL_OK;
}
