/* A growing text buffer for /metrics (Prometheus text format), shared by
 * the server's own metrics and the placement's. A failed append (out of
 * memory) sticks: the text is then dropped as a whole, never half-built. */
#ifndef TOPO_WEBHOOK_METRICS_TEXT_H
#define TOPO_WEBHOOK_METRICS_TEXT_H

#include <stddef.h>

#include "topo/error.h"

typedef struct wh_text {
    char *p;
    size_t len, cap;
    int failed;
} wh_text;

#define WH_TEXT_INIT {NULL, 0, 0, 0}

void wh_text_add(wh_text *t, const char *fmt, ...) TOPO_PRINTF(2, 3);
/* A label value as the text format quotes it: backslash, double quote and
 * newline escaped (the value may come from a request). */
void wh_text_add_label_value(wh_text *t, const char *value);
/* The text (malloc'd, NUL-terminated; the caller frees), or NULL after a
 * failed append. t is empty afterwards. */
char *wh_text_take(wh_text *t);

#endif
