/* The JSON log sink (topo/log.h): one JSON object per event and line, for
 * log collectors in a cluster. Built with jansson (never a hand-written
 * escaper); text that is not UTF-8 (a name from a request, say) is kept with
 * each bad byte as U+FFFD instead of dropping the field. */
#define _POSIX_C_SOURCE 200809L
#include "topo/log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "topo/buf.h"
#include "topo/json.h"
#include "topo/utf8.h"

/* s as a JSON string; invalid UTF-8 bytes become U+FFFD. */
static json_t *text(const char *s)
{
    json_t *j = json_string(s != NULL ? s : "");
    if (j != NULL)
        return j;
    topo_buf b = TOPO_BUF_INIT(0);
    for (const char *p = s; *p != '\0';) {
        size_t n = topo_utf8_decode(p, NULL);
        if (n == 0) {
            (void)topo_buf_puts(&b, "\xEF\xBF\xBD");
            p++;
        } else {
            (void)topo_buf_put(&b, p, n);
            p += n;
        }
    }
    char *clean = topo_buf_take(&b, NULL);
    j = clean != NULL ? json_string(clean) : NULL;
    free(clean);
    return j;
}

char *topo_log_json_line(const topo_log_event *event, double ts)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_object_set_new(o, "ts", json_real(ts));
    json_object_set_new(o, "level", json_string(topo_log_level_name(event->level)));
    json_object_set_new(o, "msg", text(event->msg));
    for (size_t i = 0; i < event->nfields; i++) {
        const char *key = event->fields[i].key;
        /* msg, level and ts are the event's own; a field cannot replace them */
        if (key == NULL || strcmp(key, "ts") == 0 || strcmp(key, "level") == 0 ||
            strcmp(key, "msg") == 0)
            continue;
        json_t *k = text(key);
        if (k != NULL)
            json_object_set_new(o, json_string_value(k), text(event->fields[i].value));
        json_decref(k);
    }
    char *line = topo_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return line;
}

void topo_log_json_sink(const topo_log_event *event, void *payload)
{
    (void)payload;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char *line = topo_log_json_line(event, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
    if (line != NULL) {
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
        free(line);
    }
}

int topo_log_use_format(const char *format, topo_err *err)
{
    if (format != NULL && strcmp(format, "json") == 0)
        topo_log_set_sink(topo_log_json_sink, NULL);
    else if (format != NULL && strcmp(format, "text") == 0)
        topo_log_set_sink(NULL, NULL);
    else
        return topo_err_set(err, TOPO_EINVALID, "log format \"%s\": expected json or text",
                            format != NULL ? format : "");
    return 0;
}
