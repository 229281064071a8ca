/* core/v1 Events (topo/k8s_event.h). */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */

#include "topo/k8s_event.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "topo/json.h"

static int is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* "<object>.<hex now_ns>"; an object name too long for the suffix is cut,
 * ending on an alphanumeric (a name must). */
static void event_name(char out[TOPO_K8S_EVENT_NAME_MAX + 1], const char *object, int64_t now_ns)
{
    char suffix[24];
    int n = snprintf(suffix, sizeof suffix, ".%" PRIx64, (uint64_t)now_ns);
    size_t room = TOPO_K8S_EVENT_NAME_MAX - (size_t)n;
    size_t len = strlen(object);
    if (len > room)
        len = room;
    while (len > 0 && !is_alnum(object[len - 1]))
        len--;
    snprintf(out, TOPO_K8S_EVENT_NAME_MAX + 1, "%.*s%s", (int)len, object, suffix);
}

int topo_k8s_event_stamp(char out[TOPO_K8S_EVENT_STAMP_SIZE], int64_t now_ns, topo_err *err)
{
    struct tm tm;
    time_t secs = (time_t)(now_ns / 1000000000);
    if (gmtime_r(&secs, &tm) == NULL ||
        strftime(out, TOPO_K8S_EVENT_STAMP_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return topo_err_set(err, TOPO_EINVALID, "event: time %" PRId64 " out of range", now_ns);
    return 0;
}

/* obj.key = s unless s is NULL; 0 or -1. */
static int set_optional(json_t *obj, const char *key, const char *s)
{
    return s == NULL ? 0 : json_object_set_new(obj, key, json_string(s));
}

int topo_k8s_event_build(json_t **out, const topo_k8s_event_spec *s, int64_t now_ns,
                         topo_err *err)
{
    char name[TOPO_K8S_EVENT_NAME_MAX + 1];
    char stamp[TOPO_K8S_EVENT_STAMP_SIZE];
    json_t *ev = NULL, *involved = NULL;

    *out = NULL;
    if (s->namespace_ == NULL || s->kind == NULL || s->name == NULL || s->type == NULL ||
        s->reason == NULL || s->message == NULL || s->component == NULL)
        return topo_err_set(err, TOPO_EINVALID, "event: a required field is missing");
    if (topo_k8s_event_stamp(stamp, now_ns, err) != 0)
        return TOPO_EINVALID;
    event_name(name, s->name, now_ns);
    topo_json_alloc_watch();
    involved = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", s->kind, "name", s->name);
    if (involved != NULL && (set_optional(involved, "namespace", s->object_namespace) < 0 ||
                             set_optional(involved, "uid", s->uid) < 0)) {
        json_decref(involved);
        involved = NULL;
    }
    /* Legacy fields (no eventTime): kubectl's "From" is source.component,
     * its "Age" lastTimestamp; the reporting fields are set for readers of
     * events.k8s.io/v1. */
    if (involved != NULL)
        ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s}, s:s, s:s, "
                       "s:i, s:s}",
                       "apiVersion", "v1", "kind", "Event", "metadata", "name", name,
                       "namespace", s->namespace_, "involvedObject", involved, "reason",
                       s->reason, "message", s->message, "type", s->type, "source", "component",
                       s->component, "firstTimestamp", stamp, "lastTimestamp", stamp, "count", 1,
                       "reportingComponent", s->component);
    if (ev != NULL && set_optional(ev, "reportingInstance", s->instance) < 0) {
        json_decref(ev);
        ev = NULL;
    }
    if (ev == NULL) {
        if (topo_json_alloc_failed())
            return topo_err_nomem(err, "event");
        return topo_err_set(err, TOPO_EINVALID, "event for %s %s: a string is not UTF-8",
                            s->kind, s->name);
    }
    *out = ev;
    return 0;
}
