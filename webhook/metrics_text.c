/* The /metrics text buffer (metrics_text.h). */
#include "metrics_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void wh_text_add(wh_text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->p && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 8192;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *np = realloc(t->p, cap);
        if (!np) {
            t->failed = 1;
            return;
        }
        t->p = np;
        t->cap = cap;
    }
}

void wh_text_add_label_value(wh_text *t, const char *value)
{
    for (const char *s = value; *s != '\0'; s++) {
        if (*s == '\\')
            wh_text_add(t, "\\\\");
        else if (*s == '"')
            wh_text_add(t, "\\\"");
        else if (*s == '\n')
            wh_text_add(t, "\\n");
        else
            wh_text_add(t, "%c", *s);
    }
}

char *wh_text_take(wh_text *t)
{
    char *p = t->failed ? NULL : t->p;
    if (t->failed)
        free(t->p);
    *t = (wh_text)WH_TEXT_INIT;
    return p;
}
