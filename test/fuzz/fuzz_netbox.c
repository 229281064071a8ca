/* libFuzzer harness for the NetBox parser (topo_netbox): one JSON page is
 * read as each of the five kinds into one parser (with an NVLink field,
 * a site and a tag filter), then finished into facts. Never a crash or a
 * leak; a returned next URL is a non-empty string; cables only between
 * known switches and hosts. The page's text also goes, the same way, into
 * a second parser through topo_netbox_read_page (which reads a page's
 * results one at a time, as over HTTP): the same verdicts, the same next
 * URLs, the count and results the tree holds, and when every kind was
 * read, the same facts. Seeds: fixtures/sources/netbox. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/netbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const topo_netbox_kind kinds[] = {TOPO_NETBOX_SITES, TOPO_NETBOX_RACKS, TOPO_NETBOX_DEVICES,
                                         TOPO_NETBOX_INTERFACES, TOPO_NETBOX_CABLES};

/* What topo_netbox_read_page says a page held, against its tree. */
static int page_agrees(const topo_netbox_page *page, const json_t *doc)
{
    const json_t *count = json_object_get(doc, "count");
    const json_t *results = json_object_get(doc, "results");
    int64_t want = json_is_integer(count) && json_integer_value(count) >= 0
                       ? (int64_t)json_integer_value(count)
                       : -1;
    if (!json_is_array(results))
        return page->is_list == 0 && page->results == 1;
    return page->is_list == 1 && page->count == want && page->results == json_array_size(results);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const roles[] = {"leaf-switch", "spine-switch", "Leaf"};
    topo_netbox_opts opts = {
        .switch_roles = roles, .nswitch_roles = 3, .nvlink_field = "nvl_domain"};
    /* every other input also runs with the default roles */
    if (size > 0 && (data[size - 1] & 1))
        opts = (topo_netbox_opts){.nvlink_field = "nvl_domain"};
    topo_facts *f = NULL, *f2 = NULL;
    topo_netbox *nb = NULL, *nb2 = NULL;
    int all_read = 1; /* every kind read by both, without running out of memory */
    json_t *doc = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (topo_codec_json_parse(&doc, (const char *)data, size, "fuzz.json", &err) != 0)
        return 0;
    if (topo_facts_create(&f, "netbox", &err) != 0 || topo_netbox_create(&nb, &opts, &err) != 0 ||
        topo_facts_create(&f2, "netbox", &err) != 0 || topo_netbox_create(&nb2, &opts, &err) != 0)
        goto cleanup;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        char *next = NULL, *next2 = NULL;
        int rc = topo_netbox_add_page_json(&next, nb, kinds[k], doc, "fuzz", &err);
        if (rc == 0 && next != NULL && next[0] == '\0')
            abort();
        topo_netbox_page page;
        int rc2 = topo_netbox_read_page(&next2, &page, nb2, kinds[k], (const char *)data, size,
                                        TOPO_MAX_NETBOX_PAGE, "fuzz", &err);
        if (rc != TOPO_ENOMEM && rc2 != TOPO_ENOMEM &&
            (rc != rc2 || (next == NULL) != (next2 == NULL) || (next && strcmp(next, next2) != 0)))
            abort();
        if (rc2 == 0 && !page_agrees(&page, doc))
            abort();
        if (rc != 0 || rc2 != 0)
            all_read = 0;
        free(next);
        free(next2);
    }
    if (topo_netbox_finish(nb, f, &err) == 0) {
        topo_netbox_stats st = topo_netbox_get_stats(nb);
        char text[TOPO_NETBOX_STATS_TEXT_MAX];
        if (strlen(topo_netbox_stats_text(text, sizeof text, &st)) >= sizeof text)
            abort();
        for (size_t i = 0; i < topo_facts_link_count(f); i++) {
            topo_facts_link l = topo_facts_link_at(f, i);
            if (l.sw >= topo_facts_switch_count(f) ||
                (l.is_host_link && l.host >= topo_facts_host_count(f)))
                abort();
        }
        if (all_read && topo_netbox_finish(nb2, f2, &err) == 0 &&
            (topo_facts_host_count(f) != topo_facts_host_count(f2) ||
             topo_facts_switch_count(f) != topo_facts_switch_count(f2) ||
             topo_facts_link_count(f) != topo_facts_link_count(f2)))
            abort();
    }
cleanup:
    topo_netbox_free(nb);
    topo_facts_free(f);
    topo_netbox_free(nb2);
    topo_facts_free(f2);
    json_decref(doc);
    return 0;
}
