/* libFuzzer harness for the UFM parser (topo_ufm): an input is either
 * {"systems": [...], "links": [...]} (both responses, in that order) or
 * one array read as systems and then, into the same parser, as links.
 * Never a crash or a leak; cables only between known switches and hosts.
 *
 * The responses' text is read a record at a time (topo_codec_json_each):
 * every input also goes through it, as the document's array and as the
 * object's "links", against a whole parse: the same verdict, the same
 * elements; and an array through topo_ufm_read_systems (text, as over
 * HTTP) gives the same facts as through the tree, counting its records.
 * Seeds: fixtures/fuzz/ufm (both responses) and the systems excerpt. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo/codec.h"
#include "topo/guid.h"
#include "topo/ufm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const topo_facts *f)
{
    /* every switch id is a GUID as topo/guid.h writes it (ibnetdiscover's too) */
    for (size_t i = 0; i < topo_facts_switch_count(f); i++) {
        const char *id = topo_facts_switch_id(f, i);
        char again[TOPO_GUID_TEXT_SIZE];
        if (strlen(id) != 16 || topo_guid_normalise(again, id, 16, "id", NULL) != 0 ||
            strcmp(again, id) != 0)
            abort();
    }
    for (size_t i = 0; i < topo_facts_link_count(f); i++) {
        topo_facts_link l = topo_facts_link_at(f, i);
        if (l.sw >= topo_facts_switch_count(f))
            abort();
        if (l.is_host_link ? (l.host != TOPO_FACTS_NO_HOST && l.host >= topo_facts_host_count(f))
                           : (l.other >= topo_facts_switch_count(f) || l.other <= l.sw))
            abort();
    }
}

static int collect(const json_t *e, size_t index, void *payload, topo_err *err)
{
    (void)index;
    return json_array_append((json_t *)payload, (json_t *)e) == 0 ? 0 : topo_err_nomem(err, "x");
}

/* How deep brackets nest outside strings: jansson's nesting limit counts
 * from where its parse starts, so an element within a level or two of it is
 * read alone and refused inside its array. */
static size_t depth(const uint8_t *d, size_t n)
{
    size_t now = 0, most = 0;
    int in_string = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_string) {
            if (d[i] == '\\')
                i++;
            else if (d[i] == '"')
                in_string = 0;
        } else if (d[i] == '"') {
            in_string = 1;
        } else if (d[i] == '[' || d[i] == '{') {
            most = ++now > most ? now : most;
        } else if ((d[i] == ']' || d[i] == '}') && now > 0) {
            now--;
        }
    }
    return most;
}

static void each_as_whole(const char *text, size_t size, const json_t *whole)
{
    const char *members[] = {NULL, "links"};
    if (depth((const uint8_t *)text, size) > 2000)
        return;
    for (int m = 0; m < 2; m++) {
        json_t *got = json_array();
        topo_err err = TOPO_ERR_INIT;
        int found = 0;
        topo_codec_each how = {.member = members[m], .element = collect, .payload = got};
        int rc = got ? topo_codec_json_each(&found, text, size, "fuzz.json", &how, &err)
                     : TOPO_ENOMEM;
        if (rc == TOPO_ENOMEM) {
            json_decref(got);
            continue;
        }
        if (!whole) {
            if (rc == 0 && found) /* accepted what a whole parse refuses */
                abort();
        } else {
            const json_t *arr = members[m] ? (json_is_object(whole)
                                                  ? json_object_get(whole, members[m])
                                                  : NULL)
                                           : whole;
            /* Text with a NUL byte is left to the whole parse. */
            int shape = json_is_array(arr) && !memchr(text, '\0', size);
            if (rc != 0 || found != shape || (found && !json_equal(got, arr)))
                abort();
        }
        json_decref(got);
    }
}

/* An array's text through the streaming reader gives the facts its tree
 * gives. */
static void text_as_tree(const char *text, size_t size, const json_t *doc)
{
    topo_facts *a = NULL, *b = NULL;
    topo_ufm *ua = NULL, *ub = NULL;
    topo_err err = TOPO_ERR_INIT;
    if (json_is_array(doc) && topo_facts_create(&a, "ufm", &err) == 0 &&
        topo_facts_create(&b, "ufm", &err) == 0 && topo_ufm_create(&ua, a, &err) == 0 &&
        topo_ufm_create(&ub, b, &err) == 0) {
        size_t records = 0;
        int ra = topo_ufm_read_systems(ua, text, size, size, &records, "systems", &err);
        int rb = topo_ufm_add_systems_json(ub, doc, "systems", &err);
        if (ra != TOPO_ENOMEM && rb != TOPO_ENOMEM &&
            (ra != rb || topo_facts_host_count(a) != topo_facts_host_count(b) ||
             topo_facts_switch_count(a) != topo_facts_switch_count(b) ||
             (ra == 0 && records != json_array_size(doc))))
            abort();
    }
    topo_ufm_free(ua);
    topo_ufm_free(ub);
    topo_facts_free(a);
    topo_facts_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    topo_facts *f = NULL;
    topo_ufm *u = NULL;
    json_t *doc = NULL;
    const json_t *systems, *links;
    topo_err err = TOPO_ERR_INIT;
    int parsed = topo_codec_json_parse(&doc, (const char *)data, size, "fuzz.json", &err);
    if (parsed == TOPO_ENOMEM)
        return 0;
    each_as_whole((const char *)data, size, doc);
    if (parsed != 0)
        return 0;
    text_as_tree((const char *)data, size, doc);
    if (topo_facts_create(&f, "ufm", &err) != 0 || topo_ufm_create(&u, f, &err) != 0)
        goto cleanup;
    systems = json_is_object(doc) ? json_object_get(doc, "systems") : doc;
    links = json_is_object(doc) ? json_object_get(doc, "links") : doc;
    if (topo_ufm_add_systems_json(u, systems, "systems", &err) == 0 &&
        topo_ufm_add_links_json(u, links, "links", &err) == 0) {
        topo_ufm_stats st = topo_ufm_get_stats(u);
        char text[TOPO_UFM_STATS_TEXT_MAX];
        if (st.switches != topo_facts_switch_count(f) ||
            topo_facts_link_count(f) > st.switch_links + st.host_links ||
            strlen(topo_ufm_stats_text(text, sizeof text, &st, topo_facts_host_count(f))) >=
                sizeof text)
            abort();
    }
    check(f);
cleanup:
    topo_ufm_free(u);
    topo_facts_free(f);
    json_decref(doc);
    return 0;
}
