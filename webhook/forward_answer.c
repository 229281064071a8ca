/* Checking a placer's answer before it is relayed (forward_answer.h). */
#define _POSIX_C_SOURCE 200809L
#include "forward_answer.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

int wh_forward_answer_ok(const char *answer, size_t len, const char *uid, char *why,
                         size_t why_size)
{
    json_error_t jerr;
    json_t *doc = json_loadb(answer, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *resp = json_object_get(doc, "response");
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    const char *got = json_string_value(json_object_get(resp, "uid"));
    int ok = 0;
    if (doc == NULL)
        snprintf(why, why_size, "not JSON (%s)", jerr.text);
    else if (kind == NULL || strcmp(kind, "AdmissionReview") != 0 || !json_is_object(resp))
        snprintf(why, why_size, "not an AdmissionReview response");
    else if (got == NULL || uid == NULL || strcmp(got, uid) != 0)
        snprintf(why, why_size, "the answer to another request (response.uid %.64s)",
                 got != NULL ? got : "absent");
    else if (!json_is_boolean(json_object_get(resp, "allowed")))
        snprintf(why, why_size, "response.allowed is not a boolean");
    else
        ok = 1;
    json_decref(doc);
    return ok;
}
