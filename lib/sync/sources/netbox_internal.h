/* What a topo_netbox accumulates from NetBox pages before finish, shared by
 * netbox.c (pages, devices, racks, sites, finish) and netbox_links.c
 * (interfaces and cables). Strings live in the parser's pool. */
#ifndef TOPO_SOURCES_NETBOX_INTERNAL_H
#define TOPO_SOURCES_NETBOX_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "topo/array.h"
#include "topo/netbox.h"
#include "topo/pool.h"
#include "topo/strmap.h"

typedef enum { NB_HOST, NB_SWITCH, NB_OTHER } nb_kind;

typedef struct nb_device {
    const char *name;
    nb_kind kind;
    const char *site;    /* slug or name, NULL: look up site_id */
    const char *site_id; /* decimal, or NULL */
    const char *rack;    /* name, NULL: look up rack_id */
    const char *rack_id;
    const char *nvlink; /* the device's own custom field value */
} nb_device;

typedef struct nb_rack {
    const char *name;
    const char *nvlink;
} nb_rack;

/* Two interfaces joined by a cable (or a traced path). */
typedef struct nb_conn {
    const char *dev_a, *port_a, *dev_b, *port_b;
} nb_conn;

typedef TOPO_ARRAY(const char *) nb_strings;

struct topo_netbox {
    topo_pool *pool;
    nb_strings switch_roles, host_roles, sites, tags;
    const char *nvlink_field;
    TOPO_ARRAY(nb_device) devices;
    topo_strmap *device_index; /* name -> first device of that name */
    TOPO_ARRAY(nb_rack) racks;
    topo_strmap *rack_index; /* id -> rack */
    nb_strings site_values;
    topo_strmap *site_index; /* id -> site_values index */
    TOPO_ARRAY(nb_conn) conns;
    topo_strmap *mgmt; /* "device\x1finterface" of management-only interfaces */
    topo_netbox_stats stats;
    size_t ignored_read; /* connections ignored while reading pages */
};

/* A connection ignored while reading a page (counted again by each
 * finish, which adds its own). */
void nb_ignore(topo_netbox *nb);

/* A borrowed string member that may also be null or absent (*out NULL). */
int nb_string(const char **out, const json_t *obj, const char *key, const char *path,
              topo_err *err);

/* The interfaces read from an interfaces page result and a cables page
 * result: connections appended, management-only interfaces noted. */
int nb_read_interface(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err);
int nb_read_cable(topo_netbox *nb, const json_t *rec, const char *path, topo_err *err);

#endif
