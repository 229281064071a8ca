/* From the name a source gives a host ("GPU-0591.cluster.example.com",
 * "gpu-0591 HCA-1" already cut to "gpu-0591", a NetBox device name) to the
 * Kubernetes node name, by rules applied the same way to every source, in
 * this order: drop the domain (everything from the first '.') or a given
 * suffix, lower-case, then one regular expression with a replacement. */
#ifndef TOPO_NAMEMAP_H
#define TOPO_NAMEMAP_H

#include <stddef.h>

#include "topo/error.h"

typedef struct topo_namemap_opts {
    int strip_domain;         /* drop everything from the first '.' */
    const char *strip_suffix; /* else drop this suffix where a name ends with it */
    int lowercase;
    /* A POSIX extended regular expression matched against the whole name
     * (anchored at both ends); where it matches, the name becomes the
     * replacement with \0..\9 substituted. Names it does not match are kept. */
    const char *pattern;
    const char *replacement;
} topo_namemap_opts;

typedef struct topo_namemap topo_namemap;

/* opts may be NULL (names kept as they are). TOPO_EINVALID naming the
 * field for a pattern that does not compile, a replacement without a
 * pattern or the reverse, or a backreference beyond the pattern's groups. */
int topo_namemap_create(topo_namemap **out, const topo_namemap_opts *opts,
                        topo_err *err) TOPO_MUST_CHECK;
void topo_namemap_free(topo_namemap *map);

/* The node name for name into out (out_size bytes); map NULL applies no
 * rule (the name is only checked). TOPO_EINVALID when the
 * result is not a valid node name (DNS-1123 subdomain: at most 253
 * lower-case alphanumerics, '-' and '.'), naming the source's name;
 * TOPO_ELIMIT when it does not fit in out. */
int topo_namemap_apply(const topo_namemap *map, const char *name, char *out, size_t out_size,
                       topo_err *err) TOPO_MUST_CHECK;

#endif
