/* lib/util/log.c: level filtering before formatting, custom sinks, logfmt
 * quoting, the default stderr sink and concurrent logging. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, dup */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/log.h"

#define CAPTURE_MAX 64

typedef struct capture {
    size_t count;
    topo_log_level levels[CAPTURE_MAX];
    char lines[CAPTURE_MAX][512];
} capture;

static void capture_sink(const topo_log_event *event, void *payload)
{
    capture *c = payload;
    if (c->count < CAPTURE_MAX) {
        c->levels[c->count] = event->level;
        topo_log_format(c->lines[c->count], sizeof(c->lines[c->count]), event);
    }
    c->count++;
}

static int setup(void **state)
{
    capture *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return -1;
    topo_log_set_sink(capture_sink, c);
    topo_log_set_level(TOPO_LOG_INFO);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    topo_log_set_sink(NULL, NULL);
    topo_log_set_level(TOPO_LOG_INFO);
    free(*state);
    return 0;
}

static int evaluations;

static int counted(int v)
{
    evaluations++;
    return v;
}

static void test_log__level_checked_before_formatting(void **state)
{
    capture *c = *state;

    evaluations = 0;
    topo_log(TOPO_LOG_DEBUG, "hidden %d", counted(1));
    assert_int_equal(evaluations, 0);
    assert_int_equal(c->count, 0);

    topo_log(TOPO_LOG_INFO, "shown %d", counted(2));
    assert_int_equal(evaluations, 1);
    assert_int_equal(c->count, 1);
    assert_string_equal(c->lines[0], "level=info msg=\"shown 2\"\n");

    topo_log_set_level(TOPO_LOG_DEBUG);
    assert_int_equal(topo_log_get_level(), TOPO_LOG_DEBUG);
    topo_log(TOPO_LOG_DEBUG, "now %s", "visible");
    assert_int_equal(c->count, 2);
    assert_int_equal(c->levels[1], TOPO_LOG_DEBUG);
    assert_string_equal(c->lines[1], "level=debug msg=\"now visible\"\n");

    topo_log_set_level(TOPO_LOG_ERROR);
    topo_log(TOPO_LOG_WARN, "dropped");
    topo_log(TOPO_LOG_ERROR, "kept");
    assert_int_equal(c->count, 3);
    assert_string_equal(c->lines[2], "level=error msg=\"kept\"\n");

    topo_log_set_level(TOPO_LOG_OFF);
    topo_log(TOPO_LOG_ERROR, "nothing %d", counted(3));
    assert_int_equal(c->count, 3);
    assert_int_equal(evaluations, 1);

    /* Out-of-range levels are ignored, never delivered. */
    topo_log_set_level((topo_log_level)42);
    assert_int_equal(topo_log_get_level(), TOPO_LOG_OFF);
    topo_log_set_level(TOPO_LOG_DEBUG);
    assert_false(topo_log_enabled(TOPO_LOG_OFF));
    assert_false(topo_log_enabled((topo_log_level)-1));
    topo_log_write(TOPO_LOG_OFF, NULL, 0, "never");
    assert_int_equal(c->count, 3);
}

static void test_log__fields(void **state)
{
    capture *c = *state;
    const topo_log_field fields[] = {
        {"podset", "trainer"},
        {"rack", "b1 r2"},
        {"empty", ""},
        {"null", NULL},
        {"eq", "a=b"},
        {"path", "C:\\x"},
        {"bad key", "v"},
        {"", "anon"},
    };

    topo_log_kv(TOPO_LOG_WARN, fields, sizeof(fields) / sizeof(fields[0]), "placed %d pods", 8);
    assert_int_equal(c->count, 1);
    assert_string_equal(c->lines[0],
                        "level=warn msg=\"placed 8 pods\" podset=trainer rack=\"b1 r2\" "
                        "empty=\"\" null=\"\" eq=\"a=b\" path=\"C:\\\\x\" bad_key=v _=anon\n");
}

static void test_log__quoting(void **state)
{
    (void)state;
    char buf[256];
    const topo_log_field f[] = {{"k", "caf\xc3\xa9"}, {"bin", "\xff"}};
    topo_log_event ev = {TOPO_LOG_INFO, "say \"hi\"\n\tback\\slash\r\x01\x7f", NULL, 0};

    topo_log_format(buf, sizeof(buf), &ev);
    assert_string_equal(buf,
                        "level=info msg=\"say \\\"hi\\\"\\n\\tback\\\\slash\\r\\u0001\\u007f\"\n");

    /* Valid UTF-8 passes through; invalid bytes become U+FFFD. */
    ev.msg = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad:\xc3 \xed\xa0\x80 \xc0\xaf";
    ev.fields = f;
    ev.nfields = 2;
    topo_log_format(buf, sizeof(buf), &ev);
    assert_string_equal(buf, "level=info msg=\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
                             "bad:\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\" "
                             "k=\"caf\xc3\xa9\" bin=\"\\ufffd\"\n");

    ev.msg = NULL;
    ev.fields = NULL;
    ev.nfields = 3;
    topo_log_format(buf, sizeof(buf), &ev);
    assert_string_equal(buf, "level=info msg=\"\"\n");
}

static void test_log__format_truncates_like_snprintf(void **state)
{
    (void)state;
    char buf[16];
    topo_log_event ev = {TOPO_LOG_ERROR, "a message that is long", NULL, 0};
    const char *full = "level=error msg=\"a message that is long\"\n";

    size_t need = topo_log_format(buf, sizeof(buf), &ev);
    assert_int_equal(need, strlen(full));
    assert_int_equal(strlen(buf), sizeof(buf) - 1);
    assert_memory_equal(buf, full, sizeof(buf) - 1);

    assert_int_equal(topo_log_format(NULL, 0, &ev), strlen(full));
    buf[0] = 'x';
    assert_int_equal(topo_log_format(buf, 1, &ev), strlen(full));
    assert_int_equal(buf[0], '\0');
}

static void test_log__long_message_is_cut(void **state)
{
    capture *c = *state;
    char big[3000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';

    topo_log(TOPO_LOG_INFO, "%s", big);
    assert_int_equal(c->count, 1);
    /* 511 bytes captured; the message itself was cut at TOPO_LOG_MSG_MAX - 1. */
    assert_int_equal(strlen(c->lines[0]), sizeof(c->lines[0]) - 1);
}

static void test_log__level_names(void **state)
{
    (void)state;
    topo_log_level l = TOPO_LOG_INFO;
    topo_err err = TOPO_ERR_INIT;
    static const char *const names[] = {"debug", "info", "warn", "error", "off"};

    for (int i = TOPO_LOG_DEBUG; i <= TOPO_LOG_OFF; i++) {
        assert_string_equal(topo_log_level_name((topo_log_level)i), names[i]);
        assert_int_equal(topo_log_level_parse(&l, names[i], &err), 0);
        assert_int_equal(l, i);
    }
    assert_int_equal(topo_log_level_parse(&l, "warning", &err), 0);
    assert_int_equal(l, TOPO_LOG_WARN);
    assert_string_equal(topo_log_level_name((topo_log_level)9), "unknown");
    assert_int_equal(topo_log_level_parse(&l, "verbose", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "verbose"));
    assert_int_equal(topo_log_level_parse(&l, NULL, NULL), TOPO_EINVALID);
}

/* The default sink: one logfmt line per event on stderr (fd 2). */
static void test_log__default_sink_writes_stderr(void **state)
{
    (void)state;
    char path[] = "/tmp/topo-test-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);

    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fd, 2) == 2);

    topo_log_set_sink(NULL, NULL);
    topo_log(TOPO_LOG_WARN, "disk %s", "full");
    const topo_log_field f[] = {{"node", "gpu-01"}};
    topo_log_kv(TOPO_LOG_ERROR, f, 1, "node lost");
    topo_log(TOPO_LOG_DEBUG, "not shown");

    fflush(stderr);
    assert_true(dup2(saved, 2) == 2);
    close(saved);

    char out[256] = {0};
    assert_true(lseek(fd, 0, SEEK_SET) == 0);
    ssize_t n = read(fd, out, sizeof(out) - 1);
    close(fd);
    assert_true(n > 0);
    assert_string_equal(out, "level=warn msg=\"disk full\"\n"
                             "level=error msg=\"node lost\" node=gpu-01\n");
}

#define THREADS 4
#define PER_THREAD 500

typedef struct counter {
    size_t events;
    size_t bytes;
} counter;

static void counting_sink(const topo_log_event *event, void *payload)
{
    counter *c = payload;
    /* Not atomic on purpose: the logger serialises sink calls. */
    c->events++;
    c->bytes += strlen(event->msg);
}

static void *log_thread(void *arg)
{
    int id = *(int *)arg;
    for (int i = 0; i < PER_THREAD; i++)
        topo_log(TOPO_LOG_INFO, "t%d", id);
    return NULL;
}

static void test_log__threads(void **state)
{
    (void)state;
    counter c = {0, 0};
    pthread_t t[THREADS];
    int ids[THREADS];

    topo_log_set_sink(counting_sink, &c);
    for (int i = 0; i < THREADS; i++) {
        ids[i] = i;
        assert_int_equal(pthread_create(&t[i], NULL, log_thread, &ids[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    topo_log_set_sink(NULL, NULL);
    assert_int_equal(c.events, THREADS * PER_THREAD);
    assert_int_equal(c.bytes, 2 * THREADS * PER_THREAD);
}

/* The JSON sink's line: the event's own keys first, fields in order, a
 * field cannot replace ts/level/msg, bytes that are not UTF-8 become
 * U+FFFD (the webhook's old sink dropped such a msg), and it parses back. */
static void test_log__json_line(void **state)
{
    (void)state;
    topo_log_field f[] = {{"uid", "a\"b\n"}, {"msg", "spoof"}, {"pod", "x\xff" "y"},
                          {"empty", NULL}, {NULL, "skipped"}};
    topo_log_event ev = {TOPO_LOG_WARN, "caf\xc3\xa9 \xc3", f, 5};
    char *line = topo_log_json_line(&ev, 1700000000.25);
    assert_non_null(line);
    /* jansson writes UTF-8 as is: U+FFFD is EF BF BD */
    assert_string_equal(line, "{\"ts\":1700000000.25,\"level\":\"warn\",\"msg\":\"caf\xc3\xa9 "
                              "\xef\xbf\xbd\",\"uid\":\"a\\\"b\\n\",\"pod\":\"x\xef\xbf\xbd"
                              "y\",\"empty\":\"\"}");
    free(line);
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_log_use_format("yaml", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "expected json or text"));
    assert_int_equal(topo_log_use_format("text", NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_log__level_checked_before_formatting, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_log__fields, setup, teardown),
        cmocka_unit_test(test_log__quoting),
        cmocka_unit_test(test_log__format_truncates_like_snprintf),
        cmocka_unit_test_setup_teardown(test_log__long_message_is_cut, setup, teardown),
        cmocka_unit_test(test_log__level_names),
        cmocka_unit_test_setup_teardown(test_log__default_sink_writes_stderr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log__threads, setup, teardown),
        cmocka_unit_test(test_log__json_line),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
