/* Structured logging: level check, logfmt formatting, sink registration. The
 * only process-wide state is the (sink, payload) pair behind a mutex and the
 * minimum level, an atomic read on every topo_log() call. */
#include "topo/log.h"
#include "topo/utf8.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A pthread mutex rather than C11 mtx_t: it needs no run-time init and
 * ThreadSanitizer understands it (gcc 12's does not intercept mtx_lock). */
static struct {
    pthread_mutex_t lock; /* guards sink and payload; held while the sink runs */
    topo_log_sink_fn sink;
    void *payload;
    atomic_int level;
} logger = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, TOPO_LOG_INFO};

static bool logger_lock(void)
{
    return pthread_mutex_lock(&logger.lock) == 0;
}

static void logger_unlock(void)
{
    pthread_mutex_unlock(&logger.lock);
}

void topo_log_set_sink(topo_log_sink_fn sink, void *payload)
{
    if (!logger_lock())
        return;
    logger.sink = sink;
    logger.payload = sink != NULL ? payload : NULL;
    logger_unlock();
}

void topo_log_set_level(topo_log_level level)
{
    if (level < TOPO_LOG_DEBUG || level > TOPO_LOG_OFF)
        return;
    atomic_store_explicit(&logger.level, (int)level, memory_order_relaxed);
}

topo_log_level topo_log_get_level(void)
{
    return (topo_log_level)atomic_load_explicit(&logger.level, memory_order_relaxed);
}

int topo_log_enabled(topo_log_level level)
{
    return level >= TOPO_LOG_DEBUG && level < TOPO_LOG_OFF &&
           (int)level >= atomic_load_explicit(&logger.level, memory_order_relaxed);
}

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

const char *topo_log_level_name(topo_log_level level)
{
    if (level < TOPO_LOG_DEBUG || level > TOPO_LOG_OFF)
        return "unknown";
    return level_names[level];
}

int topo_log_level_parse(topo_log_level *out, const char *name, topo_err *err)
{
    if (out == NULL || name == NULL)
        return topo_err_set(err, TOPO_EINVALID, "log level: missing");
    for (int i = TOPO_LOG_DEBUG; i <= TOPO_LOG_OFF; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (topo_log_level)i;
            return 0;
        }
    }
    if (strcmp(name, "warning") == 0) {
        *out = TOPO_LOG_WARN;
        return 0;
    }
    return topo_err_set(err, TOPO_EINVALID,
                        "unknown log level '%.64s' (debug, info, warn, error, off)", name);
}

/* snprintf-style output: counts every byte, stores what fits. */
typedef struct out_buf {
    char *buf;
    size_t size;
    size_t len;
} out_buf;

static void put_bytes(out_buf *o, const char *s, size_t n)
{
    if (o->len < o->size) {
        size_t room = o->size - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void put_str(out_buf *o, const char *s)
{
    put_bytes(o, s, strlen(s));
}

static void put_char(out_buf *o, char c)
{
    put_bytes(o, &c, 1);
}

static bool needs_quotes(const char *s)
{
    if (*s == '\0')
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p <= ' ' || *p == '=' || *p == '"' || *p == '\\' || *p >= 0x7f)
            return true;
    }
    return false;
}

static void put_quoted(out_buf *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;

    put_char(o, '"');
    while (*p != '\0') {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            put_char(o, '\\');
            put_char(o, (char)c);
            p++;
        } else if (c == '\n') {
            put_str(o, "\\n");
            p++;
        } else if (c == '\r') {
            put_str(o, "\\r");
            p++;
        } else if (c == '\t') {
            put_str(o, "\\t");
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
            put_bytes(o, esc, sizeof(esc));
            p++;
        } else {
            size_t n = topo_utf8_decode((const char *)p, NULL);
            if (n == 0) {
                put_str(o, "\\ufffd");
                p++;
            } else {
                put_bytes(o, (const char *)p, n);
                p += n;
            }
        }
    }
    put_char(o, '"');
}

static void put_value(out_buf *o, const char *s)
{
    if (s == NULL)
        s = "";
    if (needs_quotes(s))
        put_quoted(o, s);
    else
        put_str(o, s);
}

static void put_key(out_buf *o, const char *key)
{
    if (key == NULL || *key == '\0') {
        put_char(o, '_');
        return;
    }
    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
        unsigned char c = *p;
        bool bad = c <= ' ' || c == '=' || c == '"' || c == '\\' || c >= 0x7f;
        put_char(o, bad ? '_' : (char)c);
    }
}

size_t topo_log_format(char *buf, size_t size, const topo_log_event *event)
{
    out_buf o = {buf, size, 0};

    if (event == NULL) {
        if (size > 0)
            buf[0] = '\0';
        return 0;
    }
    put_str(&o, "level=");
    put_str(&o, topo_log_level_name(event->level));
    put_str(&o, " msg=");
    put_quoted(&o, event->msg != NULL ? event->msg : "");
    for (size_t i = 0; event->fields != NULL && i < event->nfields; i++) {
        put_char(&o, ' ');
        put_key(&o, event->fields[i].key);
        put_char(&o, '=');
        put_value(&o, event->fields[i].value);
    }
    put_char(&o, '\n');
    if (size > 0)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return o.len;
}

static void default_sink(const topo_log_event *event, void *payload)
{
    char line[TOPO_LOG_LINE_MAX];
    (void)payload;
    size_t n = topo_log_format(line, sizeof(line), event);
    if (n >= sizeof(line)) {
        /* Cut: keep the line a line. */
        n = sizeof(line) - 1;
        line[n - 1] = '\n';
    }
    fwrite(line, 1, n, stderr);
    fflush(stderr);
}

void topo_log_write(topo_log_level level, const topo_log_field *fields, size_t nfields,
                    const char *fmt, ...)
{
    char msg[TOPO_LOG_MSG_MAX];
    va_list ap;

    if (level < TOPO_LOG_DEBUG || level >= TOPO_LOG_OFF)
        return;
    msg[0] = '\0';
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
    }
    topo_log_event event = {level, msg, fields, fields != NULL ? nfields : 0};
    if (!logger_lock())
        return;
    topo_log_sink_fn sink = logger.sink != NULL ? logger.sink : default_sink;
    sink(&event, logger.payload);
    logger_unlock();
}
