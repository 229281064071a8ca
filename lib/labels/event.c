/* The core/v1 Event of a label change (topo_labelwriter_event), and the
 * patch that folds another reassertion into it (topo_labelwriter_event_update). */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */

#include "topo/labelwriter.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "topo/json.h"
#include "topo/utf8.h"

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

/* RFC 3339 UTC seconds of now_ns; 0 or TOPO_EINVALID. */
static int stamp_of(char out[32], int64_t now_ns, topo_err *err)
{
    struct tm tm;
    time_t secs = (time_t)(now_ns / 1000000000);
    if (gmtime_r(&secs, &tm) == NULL || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return topo_err_set(err, TOPO_EINVALID, "event: time %" PRId64 " out of range", now_ns);
    return 0;
}

/* "8s", "14m", "2h": a span as kubectl shows ages, rounded down. */
static void span_text(char out[32], int64_t ns)
{
    int64_t s = ns > 0 ? ns / 1000000000 : 0;
    if (s < 120)
        snprintf(out, 32, "%" PRId64 "s", s);
    else if (s < 120 * 60)
        snprintf(out, 32, "%" PRId64 "m", s / 60);
    else
        snprintf(out, 32, "%" PRId64 "h", s / 3600);
}

int topo_labelwriter_event_update(json_t **out, const topo_labeldiff *d, uint64_t count,
                                  int64_t first_ns, int64_t now_ns, topo_err *err)
{
    /* Room for the whole message and its prefix (count, span: < 96 bytes). */
    char stamp[32], span[32], msg[TOPO_LABELDIFF_MESSAGE_MAX + 96];
    *out = NULL;
    if (topo_labeldiff_message(d) == NULL)
        return 0;
    if (stamp_of(stamp, now_ns, err) != 0)
        return TOPO_EINVALID;
    span_text(span, now_ns - first_ns);
    /* The diff's message fits alone; with the prefix, the end may not:
     * cut on a character boundary. */
    int n = snprintf(msg, sizeof msg, "reasserted %" PRIu64 " times in the last %s: %s", count,
                     span, topo_labeldiff_message(d));
    size_t len = n < 0 ? 0 : (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    msg[topo_utf8_cut(msg, len, TOPO_LABELDIFF_MESSAGE_MAX)] = '\0';
    topo_json_alloc_watch();
    json_t *patch = json_pack("{s:I, s:s, s:s}", "count", (json_int_t)count, "lastTimestamp", stamp,
                              "message", msg);
    if (patch == NULL)
        return topo_json_alloc_failed()
                   ? topo_err_nomem(err, "event")
                   : topo_err_set(err, TOPO_EINVALID, "event for node %s: not UTF-8",
                                  topo_labeldiff_node_name(d));
    *out = patch;
    return 0;
}

int topo_labelwriter_event(json_t **out, const topo_labeldiff *d, const char *component,
                           const char *instance, const char *ns, int64_t now_ns, topo_err *err)
{
    char name[EVENT_NAME_MAX + 1];
    char stamp[32];
    json_t *ev = NULL, *involved = NULL;
    const char *uid = topo_labeldiff_node_uid(d);

    *out = NULL;
    if (topo_labeldiff_message(d) == NULL)
        return 0;
    if (stamp_of(stamp, now_ns, err) != 0)
        return TOPO_EINVALID;
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
