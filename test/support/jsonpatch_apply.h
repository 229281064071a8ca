/* An RFC 6902 patch applied to a document, for tests that send the webhook's
 * own output back to it (a reinvocation): add, replace, remove and test on
 * objects and arrays (index or "-"), pointers unescaped per RFC 6901. Not
 * the code under test: lib/admission only builds patches. */
#ifndef TOPO_TEST_JSONPATCH_APPLY_H
#define TOPO_TEST_JSONPATCH_APPLY_H

#include <jansson.h>

/* Applies ops (an array of operations) to doc in place. 0, or -1 at the
 * first operation that does not apply (what came before it stays applied). */
int test_jsonpatch_apply(json_t *doc, const json_t *ops);

/* The JSON Patch an AdmissionReview response carries (its base64 "patch"),
 * decoded; NULL when it has none. Fails the running cmocka test when the
 * patch is not base64 of a JSON document. */
json_t *test_jsonpatch_of_response(const json_t *resp);

#endif
