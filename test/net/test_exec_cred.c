/* Tests for lib/net/exec_cred.c and exec_run.c: the ExecCredential a
 * plugin prints (every field checked and named), and running plugins (small
 * sh scripts written per test): the credential cached until it expires,
 * renewed once after a 401 however many clients saw it, one run for many
 * threads at once, and the bounds (exit status, a missing command with its
 * install hint, output past the limit, a timeout, interactiveMode Always
 * without a terminal). No server involved. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "topo/exec_cred.h"
#include "topo/limits.h"

#include "keypair_fixture.h"
#include "support/tmpdir.h"

/* --- decoding ------------------------------------------------------------------- */

/* {"kind": "ExecCredential", "apiVersion": v1, "status": status} as text. */
static char *credential_text(json_t *status)
{
    json_t *root = json_pack("{s:s, s:s, s:o}", "kind", "ExecCredential", "apiVersion",
                             TOPO_EXEC_API_V1, "status", status);
    assert_non_null(root);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    assert_non_null(text);
    return text;
}

static void test_exec_cred__decode_good(void **state)
{
    (void)state;
    topo_exec_credential c = {0};
    topo_err err = TOPO_ERR_INIT;

    char *text = credential_text(json_pack("{s:s}", "token", "k8s-aws-v1.abc"));
    assert_int_equal(topo_exec_credential_decode(&c, text, strlen(text), TOPO_EXEC_API_V1, &err),
                     0);
    assert_string_equal(c.token, "k8s-aws-v1.abc");
    assert_null(c.client_cert_data);
    assert_int_equal(c.expires, 0);
    topo_exec_credential_dispose(&c);
    free(text);

    text = credential_text(json_pack("{s:s, s:s, s:s}", "clientCertificateData", CERT_PEM,
                                     "clientKeyData", KEY_PEM, "expirationTimestamp",
                                     "2030-01-02T03:04:05.123+01:00"));
    assert_int_equal(topo_exec_credential_decode(&c, text, strlen(text), TOPO_EXEC_API_V1, &err),
                     0);
    assert_string_equal(c.client_cert_data, CERT_PEM);
    assert_string_equal(c.client_key_data, KEY_PEM);
    assert_null(c.token);
    assert_int_equal(c.expires, 1893549845); /* 2030-01-02T02:04:05Z */
    topo_exec_credential_dispose(&c);
    free(text);

    /* v1beta1 output for a v1beta1 plugin; "" fields are absent. */
    const char *beta = "{\"kind\":\"ExecCredential\",\"apiVersion\":\""
                       TOPO_EXEC_API_V1BETA1 "\",\"status\":{\"token\":\"t\","
                       "\"clientKeyData\":\"\"}}\n";
    assert_int_equal(topo_exec_credential_decode(&c, beta, strlen(beta), TOPO_EXEC_API_V1BETA1,
                                                 &err),
                     0);
    assert_string_equal(c.token, "t");
    topo_exec_credential_dispose(&c);
}

typedef struct bad_output {
    const char *name;
    const char *text; /* NULL: built from status */
    const char *status;
    const char *message;
} bad_output;

#define V1 "\"apiVersion\":\"" TOPO_EXEC_API_V1 "\""

static const bad_output bad_outputs[] = {
    {"empty", "", NULL, "decoding stdout"},
    {"not JSON", "Please log in at https://login.example.com", NULL, "decoding stdout"},
    {"a list", "[1, 2]", NULL, "not a JSON object"},
    {"no kind", "{" V1 ",\"status\":{\"token\":\"t\"}}", NULL, "kind: missing"},
    {"wrong kind", "{\"kind\":\"Pod\"," V1 "}", NULL, "kind: is \"Pod\", want ExecCredential"},
    {"other version",
     "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" TOPO_EXEC_API_V1BETA1 "\",\"status\":{}}",
     NULL, "configured to use API version " TOPO_EXEC_API_V1 ", it returned version"},
    {"no version", "{\"kind\":\"ExecCredential\"}", NULL, "it returned none"},
    {"no status", "{\"kind\":\"ExecCredential\"," V1 "}", NULL, "status: missing"},
    {"status a string", "{\"kind\":\"ExecCredential\"," V1 ",\"status\":\"ok\"}", NULL,
     "status: must be an object"},
    {"nothing", NULL, "{}", "status: neither a token nor clientCertificateData"},
    {"token a number", NULL, "{\"token\": 5}", "status.token: must be a string"},
    {"token with a space", NULL, "{\"token\": \"a b\"}", "status.token: bearer token has a"},
    {"cert without key", NULL, "{\"clientCertificateData\": \"x\"}",
     "status: clientCertificateData without clientKeyData"},
    {"key without cert", NULL, "{\"clientKeyData\": \"x\"}",
     "status: clientKeyData without clientCertificateData"},
    {"cert not PEM", NULL, "{\"clientCertificateData\": \"x\", \"clientKeyData\": \"y\"}",
     "status.clientCertificateData: not a PEM certificate"},
    {"bad time", NULL, "{\"token\": \"t\", \"expirationTimestamp\": \"2030-01-02 03:04\"}",
     "status.expirationTimestamp: \"2030-01-02 03:04\" is not an RFC 3339 time"},
    {"time a number", NULL, "{\"token\": \"t\", \"expirationTimestamp\": 1700000000}",
     "status.expirationTimestamp: the value is not an RFC 3339 time"},
};

static void test_exec_cred__decode_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_outputs) / sizeof(bad_outputs[0]); i++) {
        const bad_output *b = &bad_outputs[i];
        char built[512];
        const char *text = b->text;
        if (text == NULL) {
            snprintf(built, sizeof(built), "{\"kind\":\"ExecCredential\"," V1 ",\"status\":%s}",
                     b->status);
            text = built;
        }
        topo_exec_credential c = {0};
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_exec_credential_decode(&c, text, strlen(text), TOPO_EXEC_API_V1, &err);
        if (rc != TOPO_EINVALID || strstr(err.text, b->message) == NULL)
            fail_msg("%s: got %d \"%s\", want EINVALID containing \"%s\"", b->name, rc, err.text,
                     b->message);
        assert_null(c.token);
    }
    /* A certificate with another key. */
    char *text = credential_text(json_pack("{s:s, s:s}", "clientCertificateData", CERT_PEM,
                                           "clientKeyData", OTHER_KEY_PEM));
    topo_exec_credential c = {0};
    topo_err err = TOPO_ERR_INIT;
    assert_int_equal(topo_exec_credential_decode(&c, text, strlen(text), TOPO_EXEC_API_V1, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "status.clientKeyData is not the key of "
                                     "status.clientCertificateData"));
    free(text);
}

/* An encrypted key (either PEM form) is refused at once with what to do,
 * never by asking for a passphrase on the terminal (OpenSSL's default,
 * which waits for ever after the plugin has exited). */
static void test_exec_cred__encrypted_key_refused(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        const char *message;
    } cases[] = {
        {ENC_KEY_PEM, "status.clientKeyData: an encrypted private key: topo cannot ask for its "
                      "passphrase; decrypt it (openssl pkey"},
        {ENC_TRAD_KEY_PEM, "status.clientKeyData: an encrypted private key"},
        {"-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
         "status.clientKeyData: not a PEM private key"},
        {KEY_PEM, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = credential_text(json_pack("{s:s, s:s}", "clientCertificateData", CERT_PEM,
                                               "clientKeyData", cases[i].key));
        topo_exec_credential c = {0};
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_exec_credential_decode(&c, text, strlen(text), TOPO_EXEC_API_V1, &err);
        free(text);
        if (cases[i].message == NULL) {
            assert_int_equal(rc, 0);
            assert_string_equal(c.client_key_data, KEY_PEM);
            topo_exec_credential_dispose(&c);
            continue;
        }
        if (rc != TOPO_EINVALID || strstr(err.text, cases[i].message) == NULL)
            fail_msg("case %zu: got %d \"%s\", want EINVALID containing \"%s\"", i, rc, err.text,
                     cases[i].message);
        assert_null(strstr(err.text, "ENCRYPTED")); /* the key's text is not quoted */
        assert_null(c.client_key_data);
    }
}

/* --- running ---------------------------------------------------------------------- */

typedef struct scratch {
    char dir[64];
    char count[128]; /* the plugins append a line per run */
} scratch;

static int scratch_setup(void **state)
{
    scratch *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    assert_int_equal(topo_test_tmpdir_make(s->dir, sizeof(s->dir), "exec"), 0);
    snprintf(s->count, sizeof(s->count), "%s/runs", s->dir);
    unsetenv("TOPO_EXEC_TIMEOUT_MS");
    *state = s;
    return 0;
}

static int scratch_teardown(void **state)
{
    scratch *s = *state;
    assert_int_equal(topo_test_tmpdir_remove(s->dir), 0);
    unsetenv("TOPO_EXEC_TIMEOUT_MS");
    free(s);
    return 0;
}

/* An executable sh script DIR/NAME: a line appended to the count file,
 * then body. Returns its path (static). */
static const char *plugin(const scratch *s, const char *name, const char *body)
{
    static char path[192];
    snprintf(path, sizeof(path), "%s/%s", s->dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\necho run >> '%s'\n%s\n", s->count, body);
    fclose(f);
    assert_int_equal(chmod(path, 0700), 0);
    return path;
}

static int runs(const scratch *s)
{
    FILE *f = fopen(s->count, "r");
    int n = 0, ch;
    if (f == NULL)
        return 0;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

/* A plugin printing a v1 ExecCredential with this status JSON. */
#define PRINT_STATUS(status) \
    "cat <<'END'\n{\"kind\":\"ExecCredential\"," V1 ",\"status\":" status "}\nEND"

static topo_exec_cred *make(const char *command, topo_exec_interactive_mode mode,
                            const char *hint)
{
    topo_exec_spec spec = {0};
    topo_exec_cred *c = NULL;
    topo_err err = TOPO_ERR_INIT;
    spec.api_version = strdup(TOPO_EXEC_API_V1);
    spec.command = strdup(command);
    spec.interactive_mode = mode;
    spec.install_hint = hint != NULL ? strdup(hint) : NULL;
    assert_int_equal(topo_exec_cred_create(&c, &spec, &err), 0);
    assert_null(spec.command);
    return c;
}

static void test_exec_cred__cached(void **state)
{
    scratch *s = *state;
    topo_exec_credential a = {0}, b = {0};
    topo_err err = TOPO_ERR_INIT;

    /* No expiry: one run serves every request. */
    topo_exec_cred *c = make(plugin(s, "p", PRINT_STATUS("{\"token\":\"t1\"}")), TOPO_EXEC_NEVER,
                             NULL);
    assert_int_equal(runs(s), 0); /* creating runs nothing */
    assert_int_equal(topo_exec_cred_get(&a, c, &err), 1);
    assert_string_equal(a.token, "t1");
    assert_int_equal(topo_exec_cred_get(&a, c, &err), 0);
    assert_int_equal(topo_exec_cred_get(&b, c, &err), 1); /* another client's first copy */
    assert_int_equal(runs(s), 1);

    /* A 401 seen by both clients: one run, both get the new credential. */
    assert_int_equal(topo_exec_cred_renew(&a, c, &err), 1);
    assert_int_equal(runs(s), 2);
    assert_int_equal(topo_exec_cred_renew(&b, c, &err), 1);
    assert_int_equal(runs(s), 2);
    assert_int_equal(a.generation, b.generation);
    topo_exec_credential_dispose(&a);
    topo_exec_credential_dispose(&b);
    topo_exec_cred_free(c);

    /* Expiry an hour ahead: cached; already past: run again each time. */
    unlink(s->count);
    time_t now = time(NULL);
    char body[256], stamp[32];
    struct tm tm;
    time_t later = now + 3600, earlier = now - 60;
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&later, &tm));
    snprintf(body, sizeof(body),
             PRINT_STATUS("{\"token\":\"t\",\"expirationTimestamp\":\"%s\"}"), stamp);
    c = make(plugin(s, "later", body), TOPO_EXEC_NEVER, NULL);
    for (int i = 0; i < 3; i++)
        assert_true(topo_exec_cred_get(&a, c, &err) >= 0);
    assert_int_equal(runs(s), 1);
    assert_int_equal(a.expires, (int64_t)later);
    topo_exec_credential_dispose(&a);
    topo_exec_cred_free(c);

    unlink(s->count);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&earlier, &tm));
    snprintf(body, sizeof(body),
             PRINT_STATUS("{\"token\":\"t\",\"expirationTimestamp\":\"%s\"}"), stamp);
    c = make(plugin(s, "earlier", body), TOPO_EXEC_NEVER, NULL);
    for (int i = 0; i < 3; i++)
        assert_int_equal(topo_exec_cred_get(&a, c, &err), 1);
    assert_int_equal(runs(s), 3);
    assert_int_equal(topo_exec_cred_runs(c), 3);
    topo_exec_credential_dispose(&a);
    /* References: the last one frees. */
    assert_ptr_equal(topo_exec_cred_incref(c), c);
    topo_exec_cred_free(c);
    topo_exec_cred_free(c);
}

typedef struct racer {
    topo_exec_cred *c;
    int rc;
    topo_exec_credential cur;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    topo_err err = TOPO_ERR_INIT;
    r->rc = topo_exec_cred_get(&r->cur, r->c, &err);
    return NULL;
}

static void test_exec_cred__threads(void **state)
{
    scratch *s = *state;
    /* Slow enough that every thread asks while the first run goes on. */
    topo_exec_cred *c = make(plugin(s, "slow", "sleep 0.3\n" PRINT_STATUS("{\"token\":\"t\"}")),
                             TOPO_EXEC_NEVER, NULL);
    racer r[8];
    pthread_t t[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (racer){.c = c};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(r[i].rc, 1);
        assert_string_equal(r[i].cur.token, "t");
        topo_exec_credential_dispose(&r[i].cur);
    }
    assert_int_equal(runs(s), 1);
    topo_exec_cred_free(c);
}

/* The error a plugin's single run gives. */
static int run_once(topo_exec_cred *c, topo_err *err)
{
    topo_exec_credential cur = {0};
    int rc = topo_exec_cred_get(&cur, c, err);
    topo_exec_credential_dispose(&cur);
    return rc;
}

static void test_exec_cred__failures(void **state)
{
    scratch *s = *state;
    topo_err err = TOPO_ERR_INIT;

    topo_exec_cred *c = make(plugin(s, "fails", "echo denied >&2\nexit 3"), TOPO_EXEC_NEVER, NULL);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_non_null(strstr(err.text, "failed with exit code 3"));
    topo_exec_cred_free(c);

    c = make(plugin(s, "killed", "kill -9 $$"), TOPO_EXEC_NEVER, NULL);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_non_null(strstr(err.text, "failed with exit code 137"));
    topo_exec_cred_free(c);

    c = make("topo-no-such-plugin-here", TOPO_EXEC_NEVER, "brew install it");
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_non_null(strstr(err.text, "executable topo-no-such-plugin-here not found"));
    assert_non_null(strstr(err.text, "brew install it"));
    topo_exec_cred_free(c);

    /* Exactly the limit is read whole (and is no credential); one byte
     * more is refused as too much. */
    char body[160];
    snprintf(body, sizeof(body), "head -c %u /dev/zero | tr '\\0' x", TOPO_MAX_EXEC_OUTPUT);
    c = make(plugin(s, "full", body), TOPO_EXEC_NEVER, NULL);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_non_null(strstr(err.text, "decoding stdout"));
    topo_exec_cred_free(c);
    snprintf(body, sizeof(body), "head -c %u /dev/zero | tr '\\0' x", TOPO_MAX_EXEC_OUTPUT + 1);
    c = make(plugin(s, "over", body), TOPO_EXEC_NEVER, NULL);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_non_null(strstr(err.text, "printed more than 1048576 bytes"));
    topo_exec_cred_free(c);

    /* The timeout: the whole group is killed, so `sleep` (holding the pipe)
     * does not keep us waiting. */
    setenv("TOPO_EXEC_TIMEOUT_MS", "300", 1);
    c = make(plugin(s, "hangs", "sleep 20"), TOPO_EXEC_NEVER, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_non_null(strstr(err.text, "did not finish within 300 ms"));
    assert_true(t1.tv_sec - t0.tv_sec < 5);
    topo_exec_cred_free(c);
    unsetenv("TOPO_EXEC_TIMEOUT_MS");
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A failed run is answered again, same code and message, by every caller
 * (threads too, and a renewal after a 401) until its back-off has passed;
 * the back-off doubles per failure in a row up to its max; a success
 * forgets the failures. */
static void test_exec_cred__failure_backoff(void **state)
{
    scratch *s = *state;
    topo_err err = TOPO_ERR_INIT, again = TOPO_ERR_INIT;
    char body[256];
    /* Fails its first two runs, then gives a token. */
    snprintf(body, sizeof(body),
             "if [ \"$(wc -l < '%s')\" -le 2 ]; then echo denied >&2; exit 3; fi\n%s", s->count,
             PRINT_STATUS("{\"token\":\"t\"}"));
    topo_exec_cred *c = make(plugin(s, "flaky", body), TOPO_EXEC_NEVER, NULL);
    topo_exec_cred_set_failure_backoff(c, 1000, 1500);

    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_int_equal(runs(s), 1);
    assert_int_equal(run_once(c, &again), TOPO_EAUTH);
    assert_string_equal(again.text, err.text);
    racer r[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (racer){.c = c};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(r[i].rc, TOPO_EAUTH);
    }
    topo_exec_credential cur = {0};
    assert_int_equal(topo_exec_cred_renew(&cur, c, &again), TOPO_EAUTH);
    assert_int_equal(runs(s), 1);

    /* Past the first back-off (1 s): one more run, which fails; the next
     * back-off is 2 s, capped at 1.5 s. */
    sleep_ms(1100);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_int_equal(runs(s), 2);
    sleep_ms(1100);
    assert_int_equal(run_once(c, &err), TOPO_EAUTH);
    assert_int_equal(runs(s), 2);
    sleep_ms(500);
    assert_int_equal(topo_exec_cred_get(&cur, c, &err), 1);
    assert_string_equal(cur.token, "t");
    assert_int_equal(runs(s), 3);
    topo_exec_credential_dispose(&cur);
    topo_exec_cred_free(c);
}

static void test_exec_cred__interactive(void **state)
{
    scratch *s = *state;
    topo_err err = TOPO_ERR_INIT;
    /* stdin is /dev/null here, whatever ran the test. */
    int saved = dup(STDIN_FILENO), null = open("/dev/null", O_RDONLY);
    assert_true(saved >= 0 && null >= 0);
    assert_int_equal(dup2(null, STDIN_FILENO), STDIN_FILENO);
    close(null);

    topo_exec_cred *c = make(plugin(s, "p", PRINT_STATUS("{\"token\":\"t\"}")), TOPO_EXEC_ALWAYS,
                             NULL);
    assert_int_equal(run_once(c, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "standard input is not a terminal"));
    assert_int_equal(runs(s), 0);
    topo_exec_cred_free(c);

    /* IfAvailable without a terminal: runs, told it is not interactive. */
    char body[256];
    snprintf(body, sizeof(body), "echo \"$KUBERNETES_EXEC_INFO\" > '%s/info'\n%s", s->dir,
             PRINT_STATUS("{\"token\":\"t\"}"));
    c = make(plugin(s, "q", body), TOPO_EXEC_IF_AVAILABLE, NULL);
    assert_int_equal(run_once(c, &err), 1);
    topo_exec_cred_free(c);
    char path[128];
    snprintf(path, sizeof(path), "%s/info", s->dir);
    json_error_t jerr;
    json_t *info = json_load_file(path, 0, &jerr);
    assert_non_null(info);
    assert_true(json_is_false(json_object_get(json_object_get(info, "spec"), "interactive")));
    json_decref(info);

    assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
    close(saved);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exec_cred__decode_good),
        cmocka_unit_test(test_exec_cred__decode_errors),
        cmocka_unit_test(test_exec_cred__encrypted_key_refused),
        cmocka_unit_test_setup_teardown(test_exec_cred__cached, scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_exec_cred__threads, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test_setup_teardown(test_exec_cred__failures, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test_setup_teardown(test_exec_cred__failure_backoff, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test_setup_teardown(test_exec_cred__interactive, scratch_setup,
                                        scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
