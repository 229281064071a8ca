/* The core/v1 Event of a label change (topo_labelwriter_event), and the
 * patch that folds another reassertion into it (topo_labelwriter_event_update). */
#include "topo/labelwriter.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "topo/json.h"
#include "topo/k8s_event.h"
#include "topo/utf8.h"

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
    char stamp[TOPO_K8S_EVENT_STAMP_SIZE], span[32], msg[TOPO_LABELDIFF_MESSAGE_MAX + 96];
    *out = NULL;
    if (topo_labeldiff_message(d) == NULL)
        return 0;
    if (topo_k8s_event_stamp(stamp, now_ns, err) != 0)
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
    *out = NULL;
    if (topo_labeldiff_message(d) == NULL)
        return 0;
    /* A Node is cluster-scoped: its Events go to ns ("default"), and its
     * involvedObject has no namespace. */
    topo_k8s_event_spec spec = {.namespace_ = ns,
                                .kind = "Node",
                                .name = topo_labeldiff_node_name(d),
                                .uid = topo_labeldiff_node_uid(d),
                                .type = topo_labeldiff_event_type(d),
                                .reason = topo_labeldiff_reason(d),
                                .message = topo_labeldiff_message(d),
                                .component = component,
                                .instance = instance};
    return topo_k8s_event_build(out, &spec, now_ns, err);
}
