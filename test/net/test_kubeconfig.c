/* Tests for lib/net/kubeconfig.c, escape.c and the pure parts of k8s.c:
 * kubeconfig and in-cluster configuration, URL escaping, request paths and
 * the mapping of API statuses to codes. No server involved. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "topo/http.h"
#include "topo/k8s.h"
#include "topo/log.h"

#include "keypair_fixture.h"
#include "support/tmpdir.h"

/* A scratch directory per test, removed afterwards. */
typedef struct scratch {
    char dir[64];
} scratch;

static int scratch_setup(void **state)
{
    scratch *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    assert_int_equal(topo_test_tmpdir_make(s->dir, sizeof(s->dir), "kcfg"), 0);
    *state = s;
    return 0;
}

static int scratch_teardown(void **state)
{
    scratch *s = *state;
    assert_int_equal(topo_test_tmpdir_remove(s->dir), 0);
    free(s);
    return 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* --- escape.c ------------------------------------------------------------------ */

static void test_kubeconfig__escape(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", ""},
        {"node-1.example_x~", "node-1.example_x~"},
        {"a b", "a%20b"},
        {"app=x,tier in (a,b)", "app%3Dx%2Ctier%20in%20%28a%2Cb%29"},
        {"spec.nodeName=n1", "spec.nodeName%3Dn1"},
        {"a/b?c&d#e%", "a%2Fb%3Fc%26d%23e%25"},
        {"\xc3\xa9", "%C3%A9"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[128];
        size_t n = topo_http_escape(buf, sizeof(buf), cases[i].in);
        assert_string_equal(buf, cases[i].out);
        assert_int_equal(n, strlen(cases[i].out));
    }
    /* Truncation reports the full length and still terminates. */
    char small[4];
    assert_int_equal(topo_http_escape(small, sizeof(small), "a b"), 5);
    assert_string_equal(small, "a%2");
    assert_int_equal(topo_http_escape(NULL, 0, "==="), 9);
}

/* --- paths and statuses ------------------------------------------------------- */

static void test_kubeconfig__paths(void **state)
{
    (void)state;
    char *p = NULL;
    topo_err err = TOPO_ERR_INIT;

    assert_int_equal(topo_k8s_path(&p, &topo_k8s_nodes, NULL, NULL, &err), 0);
    assert_string_equal(p, "/api/v1/nodes");
    free(p);
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_nodes, NULL, "n 1/x", &err), 0);
    assert_string_equal(p, "/api/v1/nodes/n%201%2Fx");
    free(p);
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_pods, NULL, NULL, &err), 0);
    assert_string_equal(p, "/api/v1/pods");
    free(p);
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_pods, "ml", "p1", &err), 0);
    assert_string_equal(p, "/api/v1/namespaces/ml/pods/p1");
    free(p);
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_jobs, "ml", NULL, &err), 0);
    assert_string_equal(p, "/apis/batch/v1/namespaces/ml/jobs");
    free(p);
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_leases, "kube-system", "topo-sync", &err), 0);
    assert_string_equal(p, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/topo-sync");
    free(p);

    assert_int_equal(topo_k8s_path(&p, &topo_k8s_nodes, "ml", "n1", &err), TOPO_EINVALID);
    assert_null(p);
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_pods, NULL, "p1", &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "needs a namespace"));
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_nodes, NULL, "", &err), TOPO_EINVALID);

    /* Longer than the limit. */
    char *big = malloc(TOPO_K8S_MAX_PATH);
    assert_non_null(big);
    memset(big, 'a', TOPO_K8S_MAX_PATH - 1);
    big[TOPO_K8S_MAX_PATH - 1] = '\0';
    assert_int_equal(topo_k8s_path(&p, &topo_k8s_nodes, NULL, big, &err), TOPO_ELIMIT);
    assert_null(p);
    free(big);
}

static void test_kubeconfig__status_errors(void **state)
{
    (void)state;
    static const struct {
        long status;
        int code;
    } cases[] = {
        {200, 0},          {201, 0},
        {400, TOPO_EINVALID}, {401, TOPO_EUNAUTHORIZED}, {403, TOPO_EFORBIDDEN},
        {404, TOPO_ENOTFOUND}, {409, TOPO_ECONFLICT},    {410, TOPO_EGONE},
        {422, TOPO_EINVALID}, {429, TOPO_ETHROTTLED},    {500, TOPO_ESERVER},
        {503, TOPO_ESERVER},  {504, TOPO_ETIMEOUT},      {418, TOPO_EGENERIC},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        topo_err err = TOPO_ERR_INIT;
        assert_int_equal(topo_k8s_status_error(cases[i].status, NULL, 0, "GET /x", &err),
                         cases[i].code);
    }
    topo_err err = TOPO_ERR_INIT;
    const char *st = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                     "\"Failure\",\"message\":\"nodes \\\"n1\\\" not found\",\"reason\":"
                     "\"NotFound\",\"details\":{\"name\":\"n1\",\"kind\":\"nodes\"},\"code\":404}";
    assert_int_equal(topo_k8s_status_error(404, st, strlen(st), "GET /api/v1/nodes/n1", &err),
                     TOPO_ENOTFOUND);
    assert_string_equal(err.text, "GET /api/v1/nodes/n1: 404 NotFound: nodes \"n1\" not found");
    const char *text = "404 page not found\n";
    assert_int_equal(topo_k8s_status_error(404, text, strlen(text), "GET /x", &err),
                     TOPO_ENOTFOUND);
    assert_string_equal(err.text, "GET /x: 404 : 404 page not found");
}

/* --- kubeconfig ----------------------------------------------------------------- */

/* A printf format: %s is fileuser's client-key directory. */
#define FULL_KUBECONFIG_FMT \
    "apiVersion: v1\n" \
    "kind: Config\n" \
    "current-context: prod\n" \
    "clusters:\n" \
    "- name: other\n" \
    "  cluster:\n" \
    "    server: https://other:6443\n" \
    "- name: gpu\n" \
    "  cluster:\n" \
    "    server: https://10.0.0.1:6443/\n" \
    "    certificate-authority-data: " CERT_B64 "\n" \
    "- name: filecluster\n" \
    "  cluster:\n" \
    "    server: http://127.0.0.1:8080\n" \
    "    certificate-authority: ca.pem\n" \
    "- name: insecure\n" \
    "  cluster:\n" \
    "    server: https://[::1]:6443\n" \
    "    insecure-skip-tls-verify: true\n" \
    "contexts:\n" \
    "- name: prod\n" \
    "  context:\n" \
    "    cluster: gpu\n" \
    "    user: admin\n" \
    "    namespace: ml\n" \
    "- name: files\n" \
    "  context:\n" \
    "    cluster: filecluster\n" \
    "    user: fileuser\n" \
    "- name: insecure\n" \
    "  context:\n" \
    "    cluster: insecure\n" \
    "users:\n" \
    "- name: admin\n" \
    "  user:\n" \
    "    client-certificate-data: " CERT_B64 "\n" \
    "    client-key-data: |\n" \
    "      " KEY_B64 "\n" \
    "    token: abc.def\n" \
    "- name: fileuser\n" \
    "  user:\n" \
    "    client-certificate: certs/client.pem\n" \
    "    client-key: %s/client.key\n" \
    "    tokenFile: token\n"

/* FULL_KUBECONFIG_FMT with fileuser's absolute client-key in dir. */
static const char *full_kubeconfig(const char *dir)
{
    static char text[8192];
    int n = snprintf(text, sizeof(text), FULL_KUBECONFIG_FMT, dir);
    assert_true(n > 0 && (size_t)n < sizeof(text));
    return text;
}

static void test_kubeconfig__data_forms(void **state)
{
    (void)state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    const char *text = full_kubeconfig("/abs");

    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml",
                                                     "/etc/kube", NULL, &err),
                     0);
    assert_string_equal(cfg.server, "https://10.0.0.1:6443");
    assert_string_equal(cfg.ca_data, CERT_PEM);
    assert_null(cfg.ca_file);
    assert_string_equal(cfg.client_cert_data, CERT_PEM);
    assert_string_equal(cfg.client_key_data, KEY_PEM); /* a block scalar: newline ignored */
    assert_string_equal(cfg.token, "abc.def");
    assert_null(cfg.token_file);
    assert_string_equal(cfg.namespace_name, "ml");
    assert_string_equal(cfg.source, "k.yaml");
    assert_int_equal(cfg.insecure_skip_verify, 0);
    topo_k8s_config_dispose(&cfg);
    topo_k8s_config_dispose(&cfg); /* twice is harmless */

    /* A context without a user: no credentials. */
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", NULL,
                                                     "insecure", &err),
                     0);
    assert_string_equal(cfg.server, "https://[::1]:6443");
    assert_int_equal(cfg.insecure_skip_verify, 1);
    assert_null(cfg.token);
    assert_null(cfg.client_cert_file);
    topo_k8s_config_dispose(&cfg);
}

static void test_kubeconfig__file_forms(void **state)
{
    scratch *s = *state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    char kube[128], abs[128], want[256];

    /* The certificate and key are read when loading: they must exist. */
    snprintf(kube, sizeof(kube), "%s/kube", s->dir);
    snprintf(abs, sizeof(abs), "%s/abs", s->dir);
    snprintf(want, sizeof(want), "%s/certs", kube);
    assert_int_equal(mkdir(kube, 0700), 0);
    assert_int_equal(mkdir(abs, 0700), 0);
    assert_int_equal(mkdir(want, 0700), 0);
    write_file(want, "client.pem", CERT_PEM);
    write_file(abs, "client.key", KEY_PEM);
    const char *text = full_kubeconfig(abs);

    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", kube,
                                                     "files", &err),
                     0);
    assert_string_equal(cfg.server, "http://127.0.0.1:8080");
    snprintf(want, sizeof(want), "%s/ca.pem", kube);
    assert_string_equal(cfg.ca_file, want);
    assert_null(cfg.ca_data);
    snprintf(want, sizeof(want), "%s/certs/client.pem", kube);
    assert_string_equal(cfg.client_cert_file, want);
    snprintf(want, sizeof(want), "%s/client.key", abs);
    assert_string_equal(cfg.client_key_file, want);
    snprintf(want, sizeof(want), "%s/token", kube);
    assert_string_equal(cfg.token_file, want);
    assert_null(cfg.token);
    assert_null(cfg.namespace_name);
    topo_k8s_config_dispose(&cfg);
}

static void test_kubeconfig__from_file(void **state)
{
    scratch *s = *state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    char path[256];

    write_file(s->dir, "config",
               "{\"apiVersion\": \"v1\", \"kind\": \"Config\", \"current-context\": \"c\",\n"
               " \"clusters\": [{\"name\": \"k\", \"cluster\": {\"server\": \"https://h:1\",\n"
               "   \"insecure-skip-tls-verify\": true}}],\n"
               " \"contexts\": [{\"name\": \"c\", \"context\": {\"cluster\": \"k\", \"user\": \"u\"}}],\n"
               " \"users\": [{\"name\": \"u\", \"user\": {\"tokenFile\": \"tok\"}}]}\n");
    snprintf(path, sizeof(path), "%s/config", s->dir);
    assert_int_equal(topo_k8s_config_kubeconfig(&cfg, path, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://h:1");
    assert_int_equal(cfg.insecure_skip_verify, 1);
    char want[256];
    snprintf(want, sizeof(want), "%s/tok", s->dir);
    assert_string_equal(cfg.token_file, want);
    assert_string_equal(cfg.source, path);
    topo_k8s_config_dispose(&cfg);

    /* Precedence: an explicit path, then $KUBECONFIG's files. */
    char env[600];
    snprintf(env, sizeof(env), "::%s:/nonexistent/other", path);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.source, path);
    topo_k8s_config_dispose(&cfg);
    assert_int_equal(topo_k8s_config_load(&cfg, "/nonexistent/kubeconfig", &err),
                     TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "/nonexistent/kubeconfig"));
    unsetenv("KUBECONFIG");

    /* Then in-cluster (not here), then ~/.kube/config. */
    unsetenv("KUBERNETES_SERVICE_HOST");
    char *home = getenv("HOME") != NULL ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", s->dir, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "no Kubernetes configuration"));
    char kube[300];
    snprintf(kube, sizeof(kube), "%s/.kube", s->dir);
    assert_int_equal(mkdir(kube, 0700), 0);
    write_file(kube, "config", "current-context: nope\n");
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "context \"nope\""));  /* not "no configuration" */
    write_file(kube, "config",
               "current-context: c\nclusters: [{name: k, cluster: {server: 'https://h:2'}}]\n"
               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://h:2");
    topo_k8s_config_dispose(&cfg);

    /* kubectl's --context: another entry of the same file, from every place
     * a kubeconfig is found; a missing one named as asked for. */
    write_file(kube, "config",
               "current-context: c\nclusters: [{name: k, cluster: {server: 'https://h:2'}},\n"
               "  {name: k3, cluster: {server: 'https://h:3'}}]\n"
               "contexts: [{name: c, context: {cluster: k}}, {name: d, context: {cluster: k3}}]\n");
    assert_int_equal(topo_k8s_config_load_context(&cfg, NULL, "d", &err), 0);
    assert_string_equal(cfg.server, "https://h:3");
    topo_k8s_config_dispose(&cfg);
    assert_int_equal(topo_k8s_config_load_context(&cfg, NULL, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://h:2");
    topo_k8s_config_dispose(&cfg);
    assert_int_equal(topo_k8s_config_load_context(&cfg, NULL, "nope", &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "context \"nope\" (named by the caller)"));
    assert_null(cfg.server);
    char kc_path[400];
    snprintf(kc_path, sizeof(kc_path), "%s/config", kube);
    setenv("KUBECONFIG", kc_path, 1);
    assert_int_equal(topo_k8s_config_load_context(&cfg, NULL, "d", &err), 0);
    assert_string_equal(cfg.server, "https://h:3");
    topo_k8s_config_dispose(&cfg);
    unsetenv("KUBECONFIG");
    assert_int_equal(topo_k8s_config_load_context(&cfg, kc_path, "d", &err), 0);
    assert_string_equal(cfg.server, "https://h:3");
    topo_k8s_config_dispose(&cfg);
    /* In a pod without a kubeconfig, a context is an error, never the pod's
     * own service account. */
    assert_int_equal(unlink(kc_path), 0);
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    assert_int_equal(topo_k8s_config_load_context(&cfg, NULL, "d", &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "context \"d\": no kubeconfig"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    if (home != NULL)
        setenv("HOME", home, 1);
    free(home);

    snprintf(path, sizeof(path), "%s/missing", s->dir);
    assert_int_equal(topo_k8s_config_kubeconfig(&cfg, path, NULL, &err), TOPO_ENOTFOUND);
    assert_null(cfg.server);
}

typedef struct bad_case {
    const char *name;
    const char *text;
    const char *context;
    int code;
    const char *message; /* a substring of the error */
} bad_case;

#define CL(extra) \
    "clusters:\n- name: k\n  cluster:\n    server: https://h:1\n" extra
#define CTX(extra) \
    "current-context: c\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n" extra
#define USER(body) "users:\n- name: u\n  user:\n" body
#define EXEC_API(v) "    exec:\n      apiVersion: client.authentication.k8s.io/" v "\n"

static const bad_case bad_cases[] = {
    {"not yaml", "a: [1,\n", NULL, TOPO_EINVALID, "kubeconfig"},
    {"not a mapping", "- a\n- b\n", NULL, TOPO_EINVALID, "not a mapping"},
    {"wrong kind", "kind: Pod\n", NULL, TOPO_EINVALID, "kind: is \"Pod\", want Config"},
    {"no current context", CL(""), NULL, TOPO_EINVALID, "current-context: not set"},
    {"unknown context", CL("") CTX("") USER("    token: t\n"), "nope", TOPO_ENOTFOUND,
     "context \"nope\" (named by the caller) is not in contexts"},
    {"unknown cluster",
     "current-context: c\ncontexts:\n- name: c\n  context:\n    cluster: zz\n", NULL,
     TOPO_ENOTFOUND, "cluster \"zz\" (named by contexts[0].context) is not in clusters"},
    {"unknown user", CL("") CTX(""), NULL, TOPO_ENOTFOUND, "user \"u\""},
    {"no server", "clusters:\n- name: k\n  cluster: {}\n" CTX("") USER("    token: t\n"), NULL,
     TOPO_EINVALID, "clusters[0].cluster.server: missing"},
    {"server not a URL", "clusters:\n- name: k\n  cluster:\n    server: h:1\n" CTX("")
     USER("    token: t\n"), NULL, TOPO_EINVALID, "clusters[0].cluster.server: \"h:1\" is not"},
    {"server not a string", "clusters:\n- name: k\n  cluster:\n    server: [1]\n" CTX("")
     USER("    token: t\n"), NULL, TOPO_EINVALID, "clusters[0].cluster.server: must be a string"},
    {"bad base64", CL("    certificate-authority-data: abc$\n") CTX("") USER("    token: t\n"),
     NULL, TOPO_EINVALID, "clusters[0].cluster.certificate-authority-data: invalid base64"},
    {"base64 length", CL("    certificate-authority-data: abcde\n") CTX("")
     USER("    token: t\n"), NULL, TOPO_EINVALID, "not a multiple of 4"},
    {"binary data", CL("") CTX("") USER("    client-certificate-data: YWIAY2Q=\n"
                                        "    client-key-data: YWIAY2Q=\n"),
     NULL, TOPO_EINVALID, "users[0].user.client-certificate-data: decodes to binary"},
    {"data and file", CL("    certificate-authority: ca.pem\n    certificate-authority-data: "
                         CERT_B64 "\n") CTX("") USER("    token: t\n"),
     NULL, TOPO_EINVALID, "certificate-authority and certificate-authority-data are both set"},
    {"cert without key", CL("") CTX("") USER("    client-certificate: c.pem\n"), NULL,
     TOPO_EINVALID, "users[0].user: client-certificate without client-key"},
    {"key without cert", CL("") CTX("") USER("    client-key-data: " KEY_B64 "\n"), NULL,
     TOPO_EINVALID, "client-key without client-certificate"},
    {"exec not a mapping", CL("") CTX("") USER("    exec: aws\n"), NULL, TOPO_EINVALID,
     "users[0].user.exec: must be a mapping"},
    {"exec without apiVersion", CL("") CTX("") USER("    exec:\n      command: aws\n"), NULL,
     TOPO_EINVALID, "users[0].user.exec.apiVersion: missing"},
    {"exec v1alpha1", CL("") CTX("") USER(EXEC_API("v1alpha1") "      command: aws\n"), NULL,
     TOPO_EUNSUPPORTED, "exec.apiVersion: client.authentication.k8s.io/v1alpha1 was removed"},
    {"exec other apiVersion", CL("") CTX("") USER("    exec:\n      apiVersion: v1\n"
                                                 "      command: aws\n"),
     NULL, TOPO_EINVALID, "exec.apiVersion: \"v1\" is not client.authentication.k8s.io/v1"},
    {"exec without command", CL("") CTX("") USER(EXEC_API("v1") "      interactiveMode: Never\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.command: missing"},
    {"exec v1 without interactiveMode", CL("") CTX("") USER(EXEC_API("v1") "      command: aws\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.interactiveMode: missing (required by"},
    {"exec bad interactiveMode", CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                                     "      interactiveMode: Sometimes\n"),
     NULL, TOPO_EINVALID, "exec.interactiveMode: \"Sometimes\" is not Never"},
    {"exec args not a list", CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                                 "      args: eks get-token\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.args: must be a list of strings"},
    {"exec arg not a string", CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                                  "      args: [eks, [x]]\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.args[1]: must be a string"},
    {"exec env not a list", CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                                "      env: {A: b}\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.env: must be a list of {name, value}"},
    {"exec env without name", CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                                  "      env:\n      - value: b\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.env[0]: name: missing"},
    {"exec env name with a value",
     CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                             "      env:\n      - name: A=SeCrEt\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.env[0]: name: \"A=...\" contains '='"},
    {"exec provideClusterInfo", CL("") CTX("") USER(EXEC_API("v1beta1") "      command: aws\n"
                                                    "      provideClusterInfo: yes please\n"),
     NULL, TOPO_EINVALID, "users[0].user.exec.provideClusterInfo: must be true or false"},
    {"cluster extensions", CL("    extensions: {a: b}\n") CTX("")
     USER(EXEC_API("v1beta1") "      command: aws\n"),
     NULL, TOPO_EINVALID, "clusters[0].cluster.extensions: must be a list"},
    {"auth provider gcp", CL("") CTX("") USER("    auth-provider:\n      name: gcp\n"), NULL,
     TOPO_EUNSUPPORTED, "users[0].user.auth-provider: the auth provider \"gcp\" is not "
                        "supported (kubectl removed its built-in providers in 1.26): use the "
                        "gke-gcloud-auth-plugin exec plugin"},
    {"auth provider azure", CL("") CTX("") USER("    auth-provider:\n      name: azure\n"), NULL,
     TOPO_EUNSUPPORTED, "use the kubelogin exec plugin"},
    {"auth provider oidc", CL("") CTX("") USER("    auth-provider:\n      name: oidc\n"), NULL,
     TOPO_EUNSUPPORTED, "kubectl oidc-login"},
    {"basic auth", CL("") CTX("") USER("    username: a\n    password: b\n"), NULL,
     TOPO_EUNSUPPORTED, "users[0].user.username"},
    {"proxy", CL("    proxy-url: http://proxy:3128\n") CTX("") USER("    token: t\n"), NULL,
     TOPO_EUNSUPPORTED, "clusters[0].cluster.proxy-url"},
    {"insecure with CA", CL("    insecure-skip-tls-verify: true\n    certificate-authority: "
                            "x.pem\n") CTX("") USER("    token: t\n"),
     NULL, TOPO_EINVALID, "insecure-skip-tls-verify and a certificate authority"},
    {"insecure not bool", CL("    insecure-skip-tls-verify: \"yes\"\n") CTX("")
     USER("    token: t\n"), NULL, TOPO_EINVALID, "insecure-skip-tls-verify: must be true"},
    {"clusters not a list", "clusters: {}\n" CTX("") USER("    token: t\n"), NULL,
     TOPO_EINVALID, "clusters: must be a list"},
    {"entry without name", "clusters:\n- cluster: {}\n" CTX("") USER("    token: t\n"), NULL,
     TOPO_EINVALID, "clusters[0]: needs a name"},
};

static void test_kubeconfig__errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const bad_case *c = &bad_cases[i];
        topo_k8s_config cfg = {0};
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_k8s_config_kubeconfig_text(&cfg, c->text, strlen(c->text), "k.yaml", NULL,
                                                 c->context, &err);
        if (rc != c->code || strstr(err.text, c->message) == NULL ||
            strstr(err.text, "k.yaml") == NULL)
            fail_msg("%s: got %d \"%s\", want %d containing \"%s\"", c->name, rc, err.text,
                     c->code, c->message);
        assert_null(cfg.server);
        assert_null(strstr(err.text, "SeCrEt")); /* a value is never echoed */
    }
}

/* --- exec plugins ----------------------------------------------------------------- */

static void test_kubeconfig__exec(void **state)
{
    (void)state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    const char *text =
        "clusters:\n- name: k\n  cluster:\n    server: https://h:1/\n"
        "    certificate-authority-data: " CERT_B64 "\n"
        "    extensions:\n    - name: other\n      extension: {a: 1}\n"
        "    - name: client.authentication.k8s.io/exec\n"
        "      extension: {audience: topo, scopes: [a, b]}\n"
        CTX("") USER(EXEC_API("v1") "      command: bin/get-token\n"
                     "      args: [eks, get-token, --cluster-name, gpu]\n"
                     "      env:\n      - name: AWS_PROFILE\n        value: ml\n"
                     "      - name: EMPTY\n"
                     "      installHint: install the aws CLI\n"
                     "      provideClusterInfo: true\n"
                     "      interactiveMode: IfAvailable\n");
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", "/etc/kc",
                                                     NULL, &err),
                     0);
    assert_non_null(cfg.exec);
    assert_null(cfg.token);
    const topo_exec_spec *x = topo_exec_cred_spec(cfg.exec);
    assert_string_equal(x->api_version, TOPO_EXEC_API_V1);
    assert_string_equal(x->command, "/etc/kc/bin/get-token"); /* relative to the kubeconfig */
    assert_int_equal(x->nargs, 4);
    assert_string_equal(x->args[0], "eks");
    assert_string_equal(x->args[3], "gpu");
    assert_int_equal(x->nenv, 2);
    assert_string_equal(x->env[0].name, "AWS_PROFILE");
    assert_string_equal(x->env[0].value, "ml");
    assert_string_equal(x->env[1].value, "");
    assert_string_equal(x->install_hint, "install the aws CLI");
    assert_int_equal(x->interactive_mode, TOPO_EXEC_IF_AVAILABLE);
    assert_true(x->provide_cluster_info);
    assert_string_equal(x->server, "https://h:1");
    assert_string_equal(x->ca_data, CERT_PEM);
    assert_string_equal(x->cluster_config, "{\"audience\":\"topo\",\"scopes\":[\"a\",\"b\"]}");
    /* Parsing ran nothing. */
    assert_int_equal(topo_exec_cred_runs(cfg.exec), 0);
    topo_k8s_config_dispose(&cfg);
    assert_null(cfg.exec);

    /* v1beta1: interactiveMode defaults to IfAvailable; a bare command is
     * looked up in PATH, not made relative. */
    text = CL("") CTX("") USER(EXEC_API("v1beta1") "      command: gke-gcloud-auth-plugin\n");
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", "/etc/kc",
                                                     NULL, &err),
                     0);
    x = topo_exec_cred_spec(cfg.exec);
    assert_string_equal(x->command, "gke-gcloud-auth-plugin");
    assert_int_equal(x->interactive_mode, TOPO_EXEC_IF_AVAILABLE);
    assert_false(x->provide_cluster_info);
    assert_null(x->cluster_config);
    topo_k8s_config_dispose(&cfg);

    /* A token in the kubeconfig wins, as in client-go: the plugin is not used. */
    text = CL("") CTX("") USER("    token: static\n" EXEC_API("v1beta1") "      command: aws\n");
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", NULL,
                                                     NULL, &err),
                     0);
    assert_string_equal(cfg.token, "static");
    assert_null(cfg.exec);
    topo_k8s_config_dispose(&cfg);
}

/* --- in-cluster ----------------------------------------------------------------- */

/* A client certificate and key are checked when the kubeconfig is loaded:
 * an encrypted key is an error naming the field, never a passphrase
 * prompt (OpenSSL's default on /dev/tty) or a crash in libcurl later. */
static void test_kubeconfig__client_key_checked(void **state)
{
    scratch *s = *state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    char text[4096], path[128];
    static const struct {
        const char *key_b64;
        int code;
        const char *message;
    } data_cases[] = {
        {ENC_KEY_B64, TOPO_EINVALID,
         "kubeconfig k.yaml: users[0].user.client-key-data: an encrypted private key: topo "
         "cannot ask for its passphrase; decrypt it (openssl pkey -in KEY -out KEY.plain)"},
        {ENC_TRAD_KEY_B64, TOPO_EINVALID,
         "kubeconfig k.yaml: users[0].user.client-key-data: an encrypted private key"},
        {OTHER_KEY_B64, TOPO_EINVALID,
         "kubeconfig k.yaml: users[0].user.client-key-data is not the key of "
         "users[0].user.client-certificate-data"},
        {CERT_B64, TOPO_EINVALID, "users[0].user.client-key-data: not a PEM private key"},
        {KEY_B64, 0, NULL},
    };
    for (size_t i = 0; i < sizeof(data_cases) / sizeof(data_cases[0]); i++) {
        snprintf(text, sizeof(text),
                 CL("") CTX("") USER("    client-certificate-data: %s\n"
                                     "    client-key-data: %s\n"),
                 CERT_B64, data_cases[i].key_b64);
        int rc = topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", NULL, NULL,
                                                 &err);
        if (rc != data_cases[i].code ||
            (data_cases[i].message != NULL && strstr(err.text, data_cases[i].message) == NULL))
            fail_msg("case %zu: got %d \"%s\", want %d \"%s\"", i, rc, err.text,
                     data_cases[i].code, data_cases[i].message);
        if (rc == 0)
            assert_string_equal(cfg.client_key_data, KEY_PEM);
        else
            assert_null(cfg.server);
        topo_k8s_config_dispose(&cfg);
    }

    /* The file forms are read now too. */
    write_file(s->dir, "c.pem", CERT_PEM);
    write_file(s->dir, "enc.key", ENC_KEY_PEM);
    write_file(s->dir, "k.key", KEY_PEM);
    snprintf(text, sizeof(text), CL("") CTX("") USER("    client-certificate: c.pem\n"
                                                     "    client-key: enc.key\n"));
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", s->dir,
                                                     NULL, &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "kubeconfig k.yaml: users[0].user.client-key: an encrypted "
                                     "private key"));
    snprintf(text, sizeof(text), CL("") CTX("") USER("    client-certificate: c.pem\n"
                                                     "    client-key: gone.key\n"));
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", s->dir,
                                                     NULL, &err),
                     TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "kubeconfig k.yaml: users[0].user.client-key: "));
    assert_non_null(strstr(err.text, "gone.key"));
    snprintf(text, sizeof(text), CL("") CTX("") USER("    client-certificate: c.pem\n"
                                                     "    client-key: k.key\n"));
    assert_int_equal(topo_k8s_config_kubeconfig_text(&cfg, text, strlen(text), "k.yaml", s->dir,
                                                     NULL, &err),
                     0);
    snprintf(path, sizeof(path), "%s/k.key", s->dir);
    assert_string_equal(cfg.client_key_file, path);
    topo_k8s_config_dispose(&cfg);
}

/* Several files merged as kubectl merges $KUBECONFIG: whole entries from the
 * first file naming them, current-context from the first that sets it,
 * relative paths against each entry's own file. */
static void test_kubeconfig__merge(void **state)
{
    (void)state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    const char *a = "current-context: c\n"
                    "clusters: [{name: k, cluster: {server: 'https://a:1', "
                    "certificate-authority: ca.pem}}]\n"
                    "contexts: [{name: c, context: {cluster: k, user: u, namespace: ns-a}},\n"
                    "  {name: d, context: {cluster: k, user: u2}}]\n"
                    "users: [{name: u2, user: {token: from-a}}]\n";
    const char *b = "current-context: other\n"
                    "clusters: [{name: k, cluster: {server: 'https://b:2'}}]\n"
                    "contexts: [{name: c, context: {cluster: zz}}, {name: other, context: "
                    "{cluster: k, user: u}}]\n"
                    "users: [{name: u, user: {tokenFile: tok}},\n"
                    "  {name: u2, user: {tokenFile: tok2}}]\n";
    topo_k8s_kubeconfig_file files[] = {
        {a, strlen(a), "/a/config", "/a"},
        {b, strlen(b), "/b/config", "/b"},
    };
    assert_int_equal(topo_k8s_config_kubeconfig_merge(&cfg, files, 2, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://a:1");     /* a's cluster k, not b's */
    assert_string_equal(cfg.ca_file, "/a/ca.pem");      /* against a's directory */
    assert_string_equal(cfg.token_file, "/b/tok");      /* user u only in b: b's directory */
    assert_string_equal(cfg.namespace_name, "ns-a");    /* a's context c, not b's */
    assert_string_equal(cfg.source, "/a/config:/b/config");
    topo_k8s_config_dispose(&cfg);
    /* An entry is taken whole: a's u2 has a token and b's u2 a token file
     * that is never merged in. */
    assert_int_equal(topo_k8s_config_kubeconfig_merge(&cfg, files, 2, "d", &err), 0);
    assert_string_equal(cfg.token, "from-a");
    assert_null(cfg.token_file);
    topo_k8s_config_dispose(&cfg);
    /* b first: its current-context, its cluster k. */
    topo_k8s_kubeconfig_file ba[] = {files[1], files[0]};
    assert_int_equal(topo_k8s_config_kubeconfig_merge(&cfg, ba, 2, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://b:2");
    assert_null(cfg.ca_file);
    topo_k8s_config_dispose(&cfg);

    /* An empty file (or one that sets nothing) adds nothing. */
    const char *header = "apiVersion: v1\nkind: Config\n";
    topo_k8s_kubeconfig_file with_empty[] = {
        {"", 0, "/e/empty", "/e"},
        {header, strlen(header), "/e/config", "/e"},
        files[0],
    };
    assert_int_equal(topo_k8s_config_kubeconfig_merge(&cfg, with_empty, 3, "d", &err), 0);
    assert_string_equal(cfg.server, "https://a:1");
    assert_string_equal(cfg.token, "from-a");
    topo_k8s_config_dispose(&cfg);

    /* Not found in any file: the files and who named it. */
    const char *lone = "current-context: nowhere\n";
    topo_k8s_kubeconfig_file missing[] = {{lone, strlen(lone), "/l/config", "/l"}, files[1]};
    assert_int_equal(topo_k8s_config_kubeconfig_merge(&cfg, missing, 2, NULL, &err),
                     TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "kubeconfig /l/config:/b/config: context \"nowhere\" "
                                     "(named by current-context of /l/config) is not in "
                                     "contexts"));
    assert_null(cfg.server);
    /* A broken file is an error even when another one has it all (kubectl:
     * "error loading config file"). */
    const char *not_yaml = "a: [1,\n";
    topo_k8s_kubeconfig_file with_broken[] = {files[0], {not_yaml, strlen(not_yaml),
                                                          "/x/config", "/x"}};
    assert_int_equal(topo_k8s_config_kubeconfig_merge(&cfg, with_broken, 2, "d", &err),
                     TOPO_EINVALID);
    assert_non_null(strstr(err.text, "/x/config"));
    assert_null(cfg.server);
}

/* kubectl's loading rules: $KUBECONFIG's files merged (missing ones
 * skipped), else ~/.kube/config, and in-cluster only when no file defines
 * anything: a pod with a kubeconfig uses the kubeconfig. */
static void test_kubeconfig__loading_rules(void **state)
{
    scratch *s = *state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    char env[512], kube[128], sa[128];
    char *home = getenv("HOME") != NULL ? strdup(getenv("HOME")) : NULL;

    write_file(s->dir, "empty", "apiVersion: v1\nkind: Config\n");
    write_file(s->dir, "kc", "current-context: c\n"
                             "clusters: [{name: k, cluster: {server: 'https://kc:1'}}]\n"
                             "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                             "users: [{name: u, user: {token: t}}]\n");
    write_file(s->dir, "ctx-only", "current-context: c\n"
                                   "clusters: [{name: k, cluster: {server: 'https://a:1'}}]\n"
                                   "contexts: [{name: c, context: {cluster: k, user: u}}]\n");
    write_file(s->dir, "user-only", "users: [{name: u, user: {tokenFile: tok}}]\n");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    setenv("HOME", s->dir, 1);

    snprintf(env, sizeof(env), "%s/empty:%s/kc", s->dir, s->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://kc:1");
    topo_k8s_config_dispose(&cfg);
    snprintf(env, sizeof(env), "%s/missing:%s/kc", s->dir, s->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://kc:1");
    snprintf(env, sizeof(env), "%s/kc", s->dir);
    assert_string_equal(cfg.source, env); /* the missing file is not named */
    topo_k8s_config_dispose(&cfg);
    snprintf(env, sizeof(env), "%s/ctx-only:%s/user-only", s->dir, s->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://a:1");
    snprintf(env, sizeof(env), "%s/tok", s->dir);
    assert_string_equal(cfg.token_file, env);
    topo_k8s_config_dispose(&cfg);
    /* A file that does not parse is an error, whatever the others hold. */
    write_file(s->dir, "broken", "a: [1,\n");
    snprintf(env, sizeof(env), "%s/kc:%s/broken", s->dir, s->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "broken"));
    /* Nothing found, not in a pod. */
    snprintf(env, sizeof(env), "%s/missing", s->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "no Kubernetes configuration"));

    /* In a pod (a service account in sa/). */
    snprintf(sa, sizeof(sa), "%s/sa", s->dir);
    assert_int_equal(mkdir(sa, 0700), 0);
    write_file(sa, "token", "pod-token\n");
    setenv(TOPO_K8S_SA_DIR_ENV, sa, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    /* $KUBECONFIG's files missing or defining nothing: in-cluster. */
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.source, "in-cluster");
    topo_k8s_config_dispose(&cfg);
    snprintf(env, sizeof(env), "%s/empty", s->dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.source, "in-cluster");
    topo_k8s_config_dispose(&cfg);
    /* No ~/.kube/config: in-cluster (the daemons in their pods). */
    unsetenv("KUBECONFIG");
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.source, "in-cluster");
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    topo_k8s_config_dispose(&cfg);
    /* ~/.kube/config present: it wins over the pod's identity (kubectl). */
    snprintf(kube, sizeof(kube), "%s/.kube", s->dir);
    assert_int_equal(mkdir(kube, 0700), 0);
    write_file(kube, "config", "current-context: c\n"
                               "clusters: [{name: k, cluster: {server: 'https://home:1'}}]\n"
                               "contexts: [{name: c, context: {cluster: k}}]\n");
    assert_int_equal(topo_k8s_config_load(&cfg, NULL, &err), 0);
    assert_string_equal(cfg.server, "https://home:1");
    topo_k8s_config_dispose(&cfg);

    unsetenv(TOPO_K8S_SA_DIR_ENV);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    if (home != NULL)
        setenv("HOME", home, 1);
    free(home);
}

static void test_kubeconfig__in_cluster(void **state)
{
    scratch *s = *state;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    char path[256];

    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "KUBERNETES_SERVICE_HOST"));

    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    /* No token yet. */
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), TOPO_ENOTFOUND);
    assert_non_null(strstr(err.text, "token"));

    write_file(s->dir, "token", "  \n");
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), TOPO_EINVALID);
    assert_non_null(strstr(err.text, "empty"));

    write_file(s->dir, "token", "eyJhbGciOi.token\n");
    /* No CA and no namespace: allowed (system CAs, no namespace). */
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), 0);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    snprintf(path, sizeof(path), "%s/token", s->dir);
    assert_string_equal(cfg.token_file, path);
    assert_null(cfg.token); /* read by the HTTP client, which re-reads it */
    assert_null(cfg.ca_file);
    assert_null(cfg.namespace_name);
    assert_string_equal(cfg.source, "in-cluster");
    topo_k8s_config_dispose(&cfg);

    write_file(s->dir, "ca.crt", CERT_PEM);
    write_file(s->dir, "namespace", "topo-system\n");
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), 0);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");
    snprintf(path, sizeof(path), "%s/ca.crt", s->dir);
    assert_string_equal(cfg.ca_file, path);
    assert_string_equal(cfg.namespace_name, "topo-system");
    topo_k8s_config_dispose(&cfg);

    setenv("KUBERNETES_SERVICE_PORT", "443/tcp", 1);
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), TOPO_EINVALID);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("KUBERNETES_SERVICE_HOST", "evil/path", 1);
    assert_int_equal(topo_k8s_config_in_cluster(&cfg, s->dir, &err), TOPO_EINVALID);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

int main(void)
{
    topo_log_set_level(TOPO_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig__escape),
        cmocka_unit_test(test_kubeconfig__paths),
        cmocka_unit_test(test_kubeconfig__status_errors),
        cmocka_unit_test(test_kubeconfig__data_forms),
        cmocka_unit_test_setup_teardown(test_kubeconfig__file_forms, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test_setup_teardown(test_kubeconfig__from_file, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test(test_kubeconfig__errors),
        cmocka_unit_test_setup_teardown(test_kubeconfig__client_key_checked, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test(test_kubeconfig__merge),
        cmocka_unit_test_setup_teardown(test_kubeconfig__loading_rules, scratch_setup,
                                        scratch_teardown),
        cmocka_unit_test(test_kubeconfig__exec),
        cmocka_unit_test_setup_teardown(test_kubeconfig__in_cluster, scratch_setup,
                                        scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
