/* Host names that differ from a node's name only by a domain: an
 * inventory's "gpu-111-05.cluster.example.com" is the node "gpu-111-05",
 * and a source's "gpu-111-05" the node named with its FQDN, when exactly one
 * node is meant. Internal to lib/sync/plan (the plan's name matching). */
#ifndef TOPO_PLAN_SHORTNAMES_H
#define TOPO_PLAN_SHORTNAMES_H

#include <stddef.h>

/* Called for a name whose short name matches several candidates: their
 * indices, sorted by name. Nonzero stops the match and is returned. */
typedef int (*plan_shortnames_ambiguous)(size_t name, const size_t *candidates, size_t n,
                                         void *payload);

/* For every names[i] that is not a candidate, same_as[i] the candidate it
 * is when exactly one matches, else SIZE_MAX (candidates' own entries are
 * SIZE_MAX too). A short name ("gpu1", no '.') matches the candidates whose
 * name up to the first '.' is it ("gpu1.a.example"); a name with a domain
 * matches the candidate named by its part up to the first '.' ("gpu1").
 * Two names that both have a domain never match each other: different
 * FQDNs are different hosts. A short name that matches two or more is
 * reported through ambiguous (may be NULL) and matches none. 0,
 * TOPO_ENOMEM, or what ambiguous returned. */
int plan_shortnames_match(size_t *same_as, const char *const *names, const unsigned char *candidate,
                          size_t n, plan_shortnames_ambiguous ambiguous, void *payload);

#endif
