/* Shared by lib/kueue's files: Kubernetes field errors (field.ErrorList) and
 * label-key messages. */
#ifndef TOPO_KUEUE_INTERNAL_H
#define TOPO_KUEUE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "topo/kueue.h"
#include "topo/labelsyntax.h"

/* A field.ErrorList being built: each entry "<field>: <body>" from pool. */
#define TOPO_KUEUE_MAX_FIELD_ERRORS 48
typedef struct kueue_errs {
    const char *msgs[TOPO_KUEUE_MAX_FIELD_ERRORS];
    size_t n;
    int oom;
    topo_pool *pool;
} kueue_errs;

/* field.Invalid with a string value (Go %q), an int32 value, or
 * field.OmitValueType; field.Required, field.Forbidden, field.Duplicate. */
void kueue_invalid(kueue_errs *e, const char *field, const char *value, const char *detail);
void kueue_invalid_int(kueue_errs *e, const char *field, int64_t value, const char *detail);
void kueue_invalid_omit(kueue_errs *e, const char *field, const char *detail);
void kueue_required(kueue_errs *e, const char *field, const char *detail);
void kueue_forbidden(kueue_errs *e, const char *field, const char *detail);
void kueue_duplicate(kueue_errs *e, const char *field, const char *value);

/* The list as Kubernetes' aggregate prints it (one error alone, else
 * "[e1, e2]" without repeats) into err: TOPO_EINVALID, TOPO_ENOMEM, or 0
 * for an empty list. */
int kueue_errs_finish(const kueue_errs *e, topo_err *err);

#endif
