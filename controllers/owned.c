/* The ownership marker of topo-sync's objects (owned.h). */
#include "owned.h"

#include <string.h>

int ctl_owned(const json_t *obj)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *v = json_string_value(json_object_get(labels, SYNC_OWNED_LABEL));
    return v && strcmp(v, SYNC_OWNED_VALUE) == 0;
}

int ctl_owned_mark(json_t *obj)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md)) {
        if (!json_is_object(obj) || json_object_set_new(obj, "metadata", json_object()) != 0)
            return -1;
        md = json_object_get(obj, "metadata");
    }
    json_t *labels = json_object_get(md, "labels");
    if (!json_is_object(labels)) {
        if (json_object_set_new(md, "labels", json_object()) != 0)
            return -1;
        labels = json_object_get(md, "labels");
    }
    return json_object_set_new(labels, SYNC_OWNED_LABEL, json_string(SYNC_OWNED_VALUE));
}
