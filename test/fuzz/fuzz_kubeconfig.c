/* libFuzzer harness for the kubeconfig parser (topo_k8s_config_kubeconfig_text,
 * exec blocks and client certificate/key checks included), the merge of
 * several kubeconfigs (topo_k8s_config_kubeconfig_merge: the input cut in
 * two at its first form feed, each half a file, merged in both orders) and
 * the ExecCredential decoder of exec plugins' output
 * (topo_exec_credential_decode): any text gives a configuration or an error
 * naming the field, never a crash, a leak or a passphrase prompt, and
 * parsing never runs a plugin. Seeds: fixtures/fuzz/kubeconfig (kubeconfigs
 * with exec users, auth-providers, and plugin outputs). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "topo/exec_cred.h"
#include "topo/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An accepted configuration names its server; an error says what. */
static void check_result(int rc, const topo_k8s_config *cfg, const topo_err *err)
{
    if (rc == 0 && cfg->server == NULL)
        __builtin_trap();
    if (rc != 0 && err->text[0] == '\0')
        __builtin_trap();
}

/* The two halves of the input around its first form feed as two files. */
static void fuzz_merge(const char *text, size_t size)
{
    const char *ff = memchr(text, '\f', size);
    if (ff == NULL)
        return;
    size_t a = (size_t)(ff - text);
    topo_k8s_kubeconfig_file files[2] = {
        {text, a, "a.yaml", "/nonexistent/a"},
        {ff + 1, size - a - 1, "b.yaml", "/nonexistent/b"},
    };
    for (int order = 0; order < 2; order++) {
        topo_k8s_kubeconfig_file two[2] = {files[order], files[1 - order]};
        topo_k8s_config cfg = {0};
        topo_err err = TOPO_ERR_INIT;
        int rc = topo_k8s_config_kubeconfig_merge(&cfg, two, 2, NULL, &err);
        check_result(rc, &cfg, &err);
        if (rc == 0 && (cfg.exec != NULL && topo_exec_cred_runs(cfg.exec) != 0))
            __builtin_trap(); /* merging ran the plugin */
        topo_k8s_config_dispose(&cfg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    topo_k8s_config cfg = {0};
    topo_err err = TOPO_ERR_INIT;
    fuzz_merge(text, size);
    if (topo_k8s_config_kubeconfig_text(&cfg, text, size, "fuzz.yaml", "/nonexistent", NULL,
                                        &err) == 0) {
        if (cfg.server == NULL)
            __builtin_trap(); /* an accepted kubeconfig names its server */
        if (cfg.exec != NULL) {
            const topo_exec_spec *x = topo_exec_cred_spec(cfg.exec);
            size_t sum = strlen(x->command) + strlen(x->api_version);
            for (size_t i = 0; i < x->nargs; i++)
                sum += strlen(x->args[i]);
            for (size_t i = 0; i < x->nenv; i++)
                sum += strlen(x->env[i].name) + strlen(x->env[i].value);
            if (topo_exec_cred_runs(cfg.exec) != 0 || sum == 0)
                __builtin_trap(); /* parsing ran the plugin */
        }
    } else if (err.text[0] == '\0') {
        __builtin_trap(); /* an error always says what */
    }
    topo_k8s_config_dispose(&cfg);

    /* The same bytes as what a plugin printed. */
    topo_exec_credential cred = {0};
    topo_err cerr = TOPO_ERR_INIT;
    if (topo_exec_credential_decode(&cred, text, size, TOPO_EXEC_API_V1, &cerr) == 0) {
        if (cred.token == NULL && cred.client_cert_data == NULL)
            __builtin_trap(); /* accepted without a credential */
    } else if (cerr.text[0] == '\0') {
        __builtin_trap();
    }
    topo_exec_credential_dispose(&cred);
    return 0;
}
