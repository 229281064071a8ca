/* The core/v1 Event of a label change (topo_labelwriter_event). */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */

#include "topo/labelwriter.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "topo/json.h"

/* Object names are DNS subdomains of at most 253 characters. */
#define EVENT_NAME_MAX 253

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* "<node>.<hex now_ns>" (client-go's recorder names events so); a node
 * name too long for the suffix is cut, ending on an alphanumeric. */
static void event_name(char out[EVENT_NAME_MAX + 1], const char *node, int64_t now_ns)
{
    char suffix[24];
    int n = snprintf(suffix, sizeof suffix, ".%" PRIx64, (uint64_t)now_ns);
    size_t room = EVENT_NAME_MAX - (size_t)n;
    size_t len = strlen(node);
    if (len > room)
        len = room;
    while (len > 0 && !is_alnum(node[len - 1]))
        len--;
    snprintf(out, EVENT_NAME_MAX + 1, "%.*s%s", (int)len, node, suffix);
}

int topo_labelwriter_event(json_t **out, const topo_labeldiff *d, const char *component,
                           const char *instance, const char *ns, int64_t now_ns, topo_err *err)
{
    char name[EVENT_NAME_MAX + 1];
    char stamp[32];
    struct tm tm;
    json_t *ev = NULL, *involved = NULL;
    const char *uid = topo_labeldiff_node_uid(d);

    *out = NULL;
    if (topo_labeldiff_message(d) == NULL)
        return 0;
    time_t secs = (time_t)(now_ns / 1000000000);
    if (gmtime_r(&secs, &tm) == NULL ||
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return topo_err_set(err, TOPO_EINVALID, "event: time %" PRId64 " out of range", now_ns);
    event_name(name, topo_labeldiff_node_name(d), now_ns);
    topo_json_alloc_watch();
    involved = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Node", "name",
                         topo_labeldiff_node_name(d));
    if (involved != NULL && uid != NULL &&
        json_object_set_new(involved, "uid", json_string(uid)) < 0) {
        json_decref(involved);
        involved = NULL;
    }
    /* Legacy fields (no eventTime): kubectl's "From" is source.component,
     * its "Age" lastTimestamp; the reporting fields are set for readers of
     * events.k8s.io/v1. */
    if (involved != NULL)
        ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s}, s:s, s:s, "
                       "s:i, s:s, s:s}",
                       "apiVersion", "v1", "kind", "Event", "metadata", "name", name,
                       "namespace", ns, "involvedObject", involved, "reason",
                       topo_labeldiff_reason(d), "message", topo_labeldiff_message(d), "type",
                       topo_labeldiff_event_type(d), "source", "component", component,
                       "firstTimestamp", stamp, "lastTimestamp", stamp, "count", 1,
                       "reportingComponent", component, "reportingInstance", instance);
    if (ev == NULL) {
        if (topo_json_alloc_failed())
            return topo_err_nomem(err, "event");
        return topo_err_set(err, TOPO_EINVALID, "event for node %s: a string is not UTF-8",
                            topo_labeldiff_node_name(d));
    }
    *out = ev;
    return 0;
}
