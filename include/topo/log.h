/* Structured logging through a sink the binary registers.
 *
 * Library code logs with topo_log(TOPO_LOG_INFO, "fmt", ...) or, with
 * key/value fields, topo_log_kv(level, fields, nfields, "fmt", ...). Both test
 * the level before evaluating their arguments or formatting anything.
 *
 * Each event goes to the registered sink. The default sink writes one logfmt
 * line per event to stderr:
 *
 *   level=info msg="placed 8 pods" podset=trainer rack="b1 r2"
 *
 * The sink and the minimum level are the only process-wide state; both may be
 * changed from any thread. The sink is called with a lock held, so events
 * never interleave and, once topo_log_set_sink() returns, the previous sink is
 * no longer running; a sink must therefore not log itself. */
#ifndef TOPO_LOG_H
#define TOPO_LOG_H

#include <stddef.h>

#include "topo/error.h"

typedef enum topo_log_level {
    TOPO_LOG_DEBUG = 0,
    TOPO_LOG_INFO = 1,
    TOPO_LOG_WARN = 2,
    TOPO_LOG_ERROR = 3,
    /* As a minimum level: log nothing. Not a level of an event. */
    TOPO_LOG_OFF = 4
} topo_log_level;

/* A formatted message is cut at this many bytes (including the NUL). */
#define TOPO_LOG_MSG_MAX 1024
/* The default sink's line is cut at this many bytes. */
#define TOPO_LOG_LINE_MAX 4096

/* One key/value pair of an event; value NULL is written as an empty string. */
typedef struct topo_log_field {
    const char *key;
    const char *value;
} topo_log_field;

/* One event, borrowed by the sink for the duration of the call. */
typedef struct topo_log_event {
    topo_log_level level;
    const char *msg;
    const topo_log_field *fields;
    size_t nfields;
} topo_log_event;

typedef void (*topo_log_sink_fn)(const topo_log_event *event, void *payload);

/* Registers the sink and its payload; NULL restores the default (logfmt to
 * stderr). */
void topo_log_set_sink(topo_log_sink_fn sink, void *payload);
/* Events below `level` are dropped; TOPO_LOG_OFF drops all. Default: info. */
void topo_log_set_level(topo_log_level level);
topo_log_level topo_log_get_level(void);
/* Non-zero when an event at `level` would reach the sink. */
int topo_log_enabled(topo_log_level level);

/* "debug", "info", "warn", "error" ("off" for TOPO_LOG_OFF). */
const char *topo_log_level_name(topo_log_level level);
/* Parses one of the names above ("warning" is accepted too). */
int topo_log_level_parse(topo_log_level *out, const char *name, topo_err *err);

/* Formats `event` as one logfmt line ending in '\n' into buf, like snprintf:
 * returns the full length the line needs, writes at most size - 1 bytes and
 * always NUL-terminates when size > 0. Keys are written bare (characters that
 * would break the line become '_'); values are quoted when needed; msg always
 * is. */
size_t topo_log_format(char *buf, size_t size, const topo_log_event *event);

/* The JSON sink: one object per line on stderr, {"ts": Unix seconds,
 * "level", "msg", then the fields in order}; fields named ts, level or msg
 * are dropped; bytes that are not UTF-8 become U+FFFD. */
void topo_log_json_sink(const topo_log_event *event, void *payload);
/* That line (malloc'd, no newline; NULL when out of memory) for time ts. */
char *topo_log_json_line(const topo_log_event *event, double ts);
/* "json" (topo_log_json_sink) or "text" (the default logfmt sink), as the
 * daemons' --log-format takes it; TOPO_EINVALID otherwise. */
int topo_log_use_format(const char *format, topo_err *err);

/* Formats and delivers an event without checking the level again: use the
 * macros below. */
void topo_log_write(topo_log_level level, const topo_log_field *fields, size_t nfields,
                    const char *fmt, ...) TOPO_PRINTF(4, 5);

#define topo_log(level, ...)                                   \
    do {                                                       \
        if (topo_log_enabled(level))                           \
            topo_log_write((level), NULL, 0, __VA_ARGS__);     \
    } while (0)

#define topo_log_kv(level, fields, nfields, ...)                     \
    do {                                                             \
        if (topo_log_enabled(level))                                 \
            topo_log_write((level), (fields), (nfields), __VA_ARGS__); \
    } while (0)

#endif
