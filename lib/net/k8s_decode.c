/* Decoders of API server responses (k8s_decode.h): the Status of an error
 * answer, one line of a watch stream, one page of a list. No I/O here, so
 * the fuzzer reaches every branch the client takes on what a server sends. */
#include "k8s_decode.h"

#include "topo/json.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "topo/http.h"

int net_k8s_status_error_obj(long status, const json_t *st, const char *body, size_t len,
                              const char *what, topo_err *err)
{
    const char *reason = NULL, *message = NULL;
    char snippet[160];

    if (json_is_object(st)) {
        reason = json_string_value(json_object_get(st, "reason"));
        message = json_string_value(json_object_get(st, "message"));
    }
    if (message == NULL) {
        /* Not a Status: quote the start of the body, printable bytes only. */
        size_t n = 0;
        for (size_t i = 0; body != NULL && i < len && n + 1 < sizeof(snippet); i++)
            snippet[n++] = isprint((unsigned char)body[i]) ? body[i] : ' ';
        while (n > 0 && snippet[n - 1] == ' ')
            n--;
        snippet[n] = '\0';
        message = n > 0 ? snippet : "(no message)";
    }
    int code = topo_http_status_code(status);
    if (code == 0)
        code = TOPO_EGENERIC; /* an ERROR event without a code */
    return topo_err_set(err, code, "%s: %ld %s: %s", what, status,
                        reason != NULL && reason[0] != '\0' ? reason : "", message);
}

int topo_k8s_status_error(long status, const char *body, size_t len, const char *what,
                          topo_err *err)
{
    if (status >= 200 && status < 300)
        return 0;
    json_error_t jerr;
    json_t *st = NULL;
    if (body != NULL && len > 0)
        if (topo_json_load(&st, body, len, 0, &jerr) != 0) /* st NULL: not a Status */
            st = NULL;
    int code = net_k8s_status_error_obj(status, st, body, len,
                                         what != NULL ? what : "kubernetes", err);
    json_decref(st);
    return code;
}

int net_k8s_copy_rv(char rv[TOPO_K8S_RV_MAX], const json_t *obj, const char *what,
                     topo_err *err)
{
    const char *v = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                      "resourceVersion"));
    if (v == NULL)
        return topo_err_set(err, TOPO_EINVALID, "%s: no metadata.resourceVersion", what);
    size_t n = strlen(v);
    if (n >= TOPO_K8S_RV_MAX)
        return topo_err_set(err, TOPO_ELIMIT, "%s: resourceVersion longer than %d bytes", what,
                            TOPO_K8S_RV_MAX - 1);
    memcpy(rv, v, n + 1);
    return 0;
}

/* ------------------------------------------------------------------ watch */

static int event_type(topo_k8s_event_type *out, const char *type)
{
    if (strcmp(type, "ADDED") == 0)
        *out = TOPO_K8S_ADDED;
    else if (strcmp(type, "MODIFIED") == 0)
        *out = TOPO_K8S_MODIFIED;
    else if (strcmp(type, "DELETED") == 0)
        *out = TOPO_K8S_DELETED;
    else if (strcmp(type, "BOOKMARK") == 0)
        *out = TOPO_K8S_BOOKMARK;
    else
        return -1;
    return 0;
}

int net_k8s_watch_line_decode(topo_k8s_watch_line *out, const char *line, size_t len,
                               int status_wanted, const char *what, topo_err *err)
{
    json_t *ev = NULL, *obj;
    const char *type;

    memset(out, 0, sizeof(*out));
    if (len == 0)
        return 0;
    json_error_t jerr;
    int lrc = topo_json_load(&ev, line, len, 0, &jerr);
    if (lrc == TOPO_ENOMEM) /* not the server's fault: no malformed line to show */
        return topo_err_nomem(err, what);
    if (lrc != 0 || !json_is_object(ev)) {
        json_decref(ev);
        out->kind = TOPO_K8S_LINE_MALFORMED;
        return topo_err_set(err, TOPO_EINVALID, "%s: malformed watch event", what);
    }
    out->root = ev;
    type = json_string_value(json_object_get(ev, "type"));
    obj = json_object_get(ev, "object");
    if (type == NULL) {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        if (kind != NULL && strcmp(kind, "Status") == 0 && status_wanted) {
            out->kind = TOPO_K8S_LINE_STATUS; /* the body of an error answer */
            return 0;
        }
        return topo_err_set(err, TOPO_EINVALID, "%s: watch event without a type", what);
    }
    if (!json_is_object(obj))
        return topo_err_set(err, TOPO_EINVALID, "%s: %s event without an object", what, type);
    if (strcmp(type, "ERROR") == 0) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        return net_k8s_status_error_obj((long)code, obj, NULL, 0, what, err);
    }
    if (event_type(&out->type, type) < 0)
        return topo_err_set(err, TOPO_EINVALID, "%s: unknown watch event type \"%.32s\"", what,
                            type);
    int error = net_k8s_copy_rv(out->rv, obj, what, err);
    if (error < 0)
        return error;
    out->kind = TOPO_K8S_LINE_EVENT;
    out->object = obj;
    return 0;
}

void net_k8s_watch_line_dispose(topo_k8s_watch_line *l)
{
    if (l == NULL)
        return;
    json_decref(l->root);
    l->root = NULL;
    l->object = NULL;
}

/* ------------------------------------------------------------------ list */

int net_k8s_list_page_decode(topo_k8s_list_page *out, char rv_out[TOPO_K8S_RV_MAX],
                              const json_t *page, const char *path, topo_err *err)
{
    int error;

    memset(out, 0, sizeof(*out));
    if (rv_out != NULL) {
        char what[256]; /* "GET <path>", cut as the client's request descriptions */
        snprintf(what, sizeof(what), "GET %s", path);
        if ((error = net_k8s_copy_rv(rv_out, page, what, err)) < 0)
            return error;
    }
    json_t *items = json_object_get(page, "items");
    if (items != NULL && !json_is_null(items) && !json_is_array(items))
        return topo_err_set(err, TOPO_EINVALID, "GET %s: items is not a list", path);
    const char *next = json_string_value(json_object_get(json_object_get(page, "metadata"),
                                                         "continue"));
    out->items = json_is_array(items) ? items : NULL;
    out->next = next != NULL && next[0] != '\0' ? next : NULL;
    return 0;
}
