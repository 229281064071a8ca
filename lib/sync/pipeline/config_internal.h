/* What topo-sync's configuration reader (config.c) shares with the reader of
 * the sources' HTTP settings (config_http.c). */
#ifndef TOPO_SYNC_CONFIG_INTERNAL_H
#define TOPO_SYNC_CONFIG_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "topo/cfgreader.h"
#include "topo/fetch.h"

/* Most keys one source's map may have (its file keys and its HTTP keys). */
#define SYNC_CFG_MAX_KEYS 32

/* Appends the HTTP keys a source of kind takes to keys[*n...] (keeping a
 * NULL after them); the caller's keys come first. */
void sync_cfg_http_keys(const char **keys, size_t *n, topo_fetch_kind kind);

/* The HTTP settings of one source's map at path ("sources.netbox") into o:
 * url, caFile, insecureSkipVerify, timeout, retries, backoff,
 * maxResponseBytes, the kind's credentials, NetBox's pageSize and lists.
 * With a url, the whole is checked as topo_fetch_check does and a problem
 * reported at the url. 0 or TOPO_EINVALID (the message in c->err). */
int sync_cfg_http(const topo_cfg *c, topo_fetch_opts *o, topo_fetch_kind kind, const json_t *obj,
                  const char *path);

#endif
