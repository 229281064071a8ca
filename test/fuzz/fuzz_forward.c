/* libFuzzer harness for what a forward reads from outside: the placer's
 * answer (wh_forward_answer_ok, relayed only when it is an AdmissionReview
 * for the request's uid) and a forwarded request's ?timeout= and
 * ?deadlineUnixMs= (wh_request_deadline): never a crash, a leak or a read
 * past the input; a deadline never later than the relative one. Input:
 * "<uid>\n<timeout>\n<deadlineUnixMs>\n<answer>" (missing lines: empty).
 * Seeds: fixtures/fuzz/forward. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forward_answer.h"
#include "request_deadline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next line of [*p, end) as a NUL-terminated copy (malloc'd). */
static char *line(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    size_t n = (size_t)((nl ? nl : end) - *p);
    char *s = malloc(n + 1);
    if (s == NULL)
        abort();
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = nl ? nl + 1 : end;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *uid = line(&p, end), *timeout = line(&p, end), *abs = line(&p, end);
    /* the answer: exactly its bytes, no terminator (as libcurl gives it) */
    size_t n = (size_t)(end - p);
    char *answer = malloc(n ? n : 1);
    if (answer == NULL)
        abort();
    memcpy(answer, p, n);

    char why[160];
    why[0] = '\0';
    int ok = wh_forward_answer_ok(answer, n, uid, why, sizeof why);
    if (!ok && why[0] == '\0')
        abort(); /* a refusal always says why */

    const int64_t start = 1000000000LL, now = 1500000000LL, wall = 1796600000000LL;
    long long t = wh_request_timeout_ms(timeout[0] ? timeout : NULL);
    int64_t rel = wh_request_deadline(start, t, 10000, NULL, now, wall);
    int64_t d = wh_request_deadline(start, t, 10000, abs, now, wall);
    if (d > rel)
        abort(); /* the absolute deadline only ever shortens it */
    free(answer);
    free(abs);
    free(timeout);
    free(uid);
    return 0;
}
