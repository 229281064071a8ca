/* Error vocabulary for all of topo: one X-macro list generates the enum, the
 * names and the messages. Codes are negative, 0 is success, and a released
 * code's value never changes. Details go into a caller-owned topo_err. */
#ifndef TOPO_ERROR_H
#define TOPO_ERROR_H

#include <stddef.h>

#define TOPO_ERROR_MAP(XX)                                   \
    XX(EGENERIC, -1, "failure")                              \
    XX(ENOMEM, -2, "out of memory")                          \
    XX(EINVALID, -3, "invalid input")                        \
    XX(ELIMIT, -4, "input exceeds configured limit")         \
    XX(EIO, -5, "input/output error")                        \
    XX(ENOTFOUND, -6, "not found")                           \
    XX(ENOFIT, -7, "does not fit")                           \
    XX(EUNSUPPORTED, -8, "not supported")                    \
    XX(ECONFLICT, -9, "resource version conflict")           \
    XX(EGONE, -10, "resource version too old (gone)")        \
    XX(EUNAUTHORIZED, -11, "unauthorized")                   \
    XX(ETHROTTLED, -12, "throttled by the server")           \
    XX(ETIMEOUT, -13, "timed out")                           \
    XX(ESERVER, -14, "server error")                         \
    XX(ECONNECT, -15, "connection failed")                   \
    XX(EFORBIDDEN, -16, "forbidden")                         \
    XX(EWAITING, -17, "waiting for more pods")               \
    XX(EAUTH, -18, "credentials unavailable")

typedef enum {
    TOPO_OK = 0,
#define TOPO_XX_ENUM(name, value, text) TOPO_##name = (value),
    TOPO_ERROR_MAP(TOPO_XX_ENUM)
#undef TOPO_XX_ENUM
} topo_code;

#define TOPO_ERR_TEXT_MAX 2048

/* Caller-owned, fixed-size error details; never allocates. Every function that
 * takes a topo_err * accepts NULL. */
typedef struct topo_err {
    int code;
    char text[TOPO_ERR_TEXT_MAX];
    const char *source; /* file name, when the error is about one */
    int line;           /* 1-based, 0 when unknown */
    int column;         /* 1-based, 0 when unknown */
} topo_err;

#define TOPO_ERR_INIT {0, {0}, NULL, 0, 0}

#if defined(__GNUC__)
#define TOPO_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TOPO_MUST_CHECK __attribute__((warn_unused_result))
#else
#define TOPO_PRINTF(a, b)
#define TOPO_MUST_CHECK
#endif

/* Sets code and message; returns code so callers can `return topo_err_set(...)`. */
int topo_err_set(topo_err *err, int code, const char *fmt, ...) TOPO_PRINTF(3, 4);
/* Prefixes the existing message with context ("nodes.json: %s"), keeping the code. */
int topo_err_wrap(topo_err *err, const char *fmt, ...) TOPO_PRINTF(2, 3);
/* Records the position the error is about. */
void topo_err_at(topo_err *err, const char *source, int line, int column);
void topo_err_clear(topo_err *err);
/* TOPO_ENOMEM with "<what>: out of memory" ("out of memory" when what is
 * NULL); returns TOPO_ENOMEM. Formats nothing that could need memory. */
int topo_err_nomem(topo_err *err, const char *what);
const char *topo_err_name(int code);
const char *topo_strerror(int code);

#endif
