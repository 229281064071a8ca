/* Tests for lib/net/k8s_decode.c: one watch line and one list page as the
 * API server sends them, decoded without a server. The watch and list
 * verbs over a fake server are the e2e tests' (test/e2e/k8s_e2e.py). */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/net/k8s_decode.h" /* white-box */
#include "topo/k8s.h"
#include "topo/log.h"

typedef struct line_case {
    const char *line;
    int status_wanted;
    int code;                 /* the return */
    topo_k8s_line_kind kind;
    topo_k8s_event_type type; /* TOPO_K8S_LINE_EVENT */
    const char *rv;           /* TOPO_K8S_LINE_EVENT */
    const char *text;         /* err.text when code != 0 */
} line_case;

static void test_k8s_decode__watch_lines(void **state)
{
    (void)state;
    static const line_case cases[] = {
        {"", 1, 0, TOPO_K8S_LINE_NONE, 0, NULL, NULL},
        {"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
         "\"resourceVersion\":\"101\"}}}",
         1, 0, TOPO_K8S_LINE_EVENT, TOPO_K8S_ADDED, "101", NULL},
        {"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"resourceVersion\":\"102\"}}}", 0,
         0, TOPO_K8S_LINE_EVENT, TOPO_K8S_MODIFIED, "102", NULL},
        {"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"resourceVersion\":\"103\"}}}", 1, 0,
         TOPO_K8S_LINE_EVENT, TOPO_K8S_DELETED, "103", NULL},
        {"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Node\",\"apiVersion\":\"v1\","
         "\"metadata\":{\"resourceVersion\":\"200\"}}}",
         1, 0, TOPO_K8S_LINE_EVENT, TOPO_K8S_BOOKMARK, "200", NULL},
        {"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
         "\"status\":\"Failure\",\"message\":\"too old resource version: 5 (10)\","
         "\"reason\":\"Expired\",\"code\":410}}",
         1, TOPO_EGONE, TOPO_K8S_LINE_NONE, 0, NULL,
         "WATCH /api/v1/nodes: 410 Expired: too old resource version: 5 (10)"},
        {"{\"type\":\"ERROR\",\"object\":{}}", 1, TOPO_EGENERIC, TOPO_K8S_LINE_NONE, 0, NULL,
         "WATCH /api/v1/nodes: 0 : (no message)"},
        {"{\"kind\":\"Status\",\"code\":403,\"message\":\"no\"}", 1, 0, TOPO_K8S_LINE_STATUS, 0,
         NULL, NULL},
        {"{\"kind\":\"Status\",\"code\":403}", 0, TOPO_EINVALID, TOPO_K8S_LINE_NONE, 0, NULL,
         "WATCH /api/v1/nodes: watch event without a type"},
        {"not json", 1, TOPO_EINVALID, TOPO_K8S_LINE_MALFORMED, 0, NULL,
         "WATCH /api/v1/nodes: malformed watch event"},
        {"[1,2]", 1, TOPO_EINVALID, TOPO_K8S_LINE_MALFORMED, 0, NULL, NULL},
        {"{\"type\":\"ADDED\",\"object\":[]}", 1, TOPO_EINVALID, TOPO_K8S_LINE_NONE, 0, NULL,
         "WATCH /api/v1/nodes: ADDED event without an object"},
        {"{\"type\":\"RENAMED\",\"object\":{}}", 1, TOPO_EINVALID, TOPO_K8S_LINE_NONE, 0, NULL,
         "WATCH /api/v1/nodes: unknown watch event type \"RENAMED\""},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}", 1, TOPO_EINVALID,
         TOPO_K8S_LINE_NONE, 0, NULL, "WATCH /api/v1/nodes: no metadata.resourceVersion"},
        {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":"
         "\"0123456789012345678901234567890123456789012345678901234567890123\"}}}",
         1, TOPO_ELIMIT, TOPO_K8S_LINE_NONE, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const line_case *c = &cases[i];
        topo_k8s_watch_line l;
        topo_err err = TOPO_ERR_INIT;
        int rc = net_k8s_watch_line_decode(&l, c->line, strlen(c->line), c->status_wanted,
                                            "WATCH /api/v1/nodes", &err);
        if (rc != c->code || l.kind != c->kind)
            fail_msg("case %zu: rc %d kind %d (%s)", i, rc, (int)l.kind, err.text);
        if (c->kind == TOPO_K8S_LINE_EVENT) {
            assert_int_equal(l.type, c->type);
            assert_true(json_is_object(l.object));
            assert_string_equal(l.rv, c->rv);
        }
        if (c->kind == TOPO_K8S_LINE_STATUS)
            assert_true(json_is_object(l.root));
        if (c->text != NULL)
            assert_string_equal(err.text, c->text);
        net_k8s_watch_line_dispose(&l);
        net_k8s_watch_line_dispose(&l); /* twice is harmless */
    }
    net_k8s_watch_line_dispose(NULL);
}

typedef struct page_case {
    const char *page;
    int want_rv;
    int code;
    size_t nitems;
    const char *next;
    const char *rv;
    const char *text;
} page_case;

static void test_k8s_decode__list_pages(void **state)
{
    (void)state;
    static const page_case cases[] = {
        {"{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"77\",\"continue\":\"tok\"},"
         "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}",
         1, 0, 2, "tok", "77", NULL},
        {"{\"metadata\":{\"continue\":\"\"},\"items\":[{}]}", 0, 0, 1, NULL, NULL, NULL},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":null}", 1, 0, 0, NULL, "1", NULL},
        {"{\"metadata\":{\"continue\":7}}", 0, 0, 0, NULL, NULL, NULL},
        {"{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":{}}", 1, TOPO_EINVALID, 0, NULL,
         NULL, "GET /api/v1/nodes?limit=500: items is not a list"},
        {"{\"items\":[]}", 1, TOPO_EINVALID, 0, NULL, NULL,
         "GET /api/v1/nodes?limit=500: no metadata.resourceVersion"},
        {"{\"items\":[]}", 0, 0, 0, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const page_case *c = &cases[i];
        json_t *page = json_loads(c->page, 0, NULL);
        topo_k8s_list_page pg;
        topo_err err = TOPO_ERR_INIT;
        char rv[TOPO_K8S_RV_MAX] = "";
        assert_non_null(page);
        int rc = net_k8s_list_page_decode(&pg, c->want_rv ? rv : NULL, page,
                                           "/api/v1/nodes?limit=500", &err);
        if (rc != c->code)
            fail_msg("case %zu: rc %d (%s)", i, rc, err.text);
        if (rc == 0) {
            assert_int_equal(json_array_size(pg.items), c->nitems);
            if (c->next == NULL)
                assert_null(pg.next);
            else
                assert_string_equal(pg.next, c->next);
            if (c->rv != NULL)
                assert_string_equal(rv, c->rv);
        }
        if (c->text != NULL)
            assert_string_equal(err.text, c->text);
        json_decref(page);
    }
}

int main(void)
{
    topo_log_set_level(TOPO_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_decode__watch_lines),
        cmocka_unit_test(test_k8s_decode__list_pages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
