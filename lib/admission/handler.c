/* The admission handler (topo_admission_handle): PodSet identification,
 * placement with the engine, in-memory reservations and slot claims, the
 * patch, and the no-fit policy. See include/topo/admission.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo/admission.h"

#include "codec/codec.h"
#include "topo/engine.h"
#include "topo/limits.h"

typedef struct slot {
    const char *const *values; /* the domain's values, one per assignment level */
    const char *claimant;      /* pod identity, NULL while free */
} slot;

typedef struct reservation {
    const char *key;
    int32_t size;
    const char *const *levels;
    size_t nlevels;
    slot *slots;
    size_t nslots;
    const char *assignment_json;
    topo_pool *pool; /* owns everything above (NULL for a dryRun's temporary) */
} reservation;

struct topo_admission_ctx {
    pthread_mutex_t mu; /* guards snap (engine + usage) and the table */
    topo_snapshot *snap;
    topo_admission_policy policy;
    topo_gates gates;
    reservation *table; /* linear: the live version is SQLite-backed */
    size_t ntable, cap;
};

int topo_admission_policy_parse(topo_admission_policy *out, const char *s)
{
    if (s == NULL)
        return -1;
    if (strcmp(s, "gate") == 0)
        *out = TOPO_ADMISSION_POLICY_GATE;
    else if (strcmp(s, "deny") == 0)
        *out = TOPO_ADMISSION_POLICY_DENY;
    else if (strcmp(s, "ignore") == 0)
        *out = TOPO_ADMISSION_POLICY_IGNORE;
    else
        return -1;
    return 0;
}

int topo_admission_ctx_create(topo_admission_ctx **out, topo_snapshot *snap,
                              topo_admission_policy policy, topo_err *err)
{
    *out = NULL;
    if (snap == NULL)
        return topo_err_set(err, TOPO_EINVALID, "admission handler: no snapshot");
    topo_admission_ctx *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "admission handler: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return topo_err_set(err, TOPO_ENOMEM, "admission handler: cannot create a mutex");
    }
    c->snap = snap;
    c->policy = policy;
    topo_gates_init(&c->gates);
    *out = c;
    return 0;
}

void topo_admission_ctx_free(topo_admission_ctx *ctx)
{
    if (ctx == NULL)
        return;
    for (size_t i = 0; i < ctx->ntable; i++)
        topo_pool_free(ctx->table[i].pool);
    free(ctx->table);
    pthread_mutex_destroy(&ctx->mu);
    free(ctx);
}

size_t topo_admission_ctx_reservations(topo_admission_ctx *ctx)
{
    pthread_mutex_lock(&ctx->mu);
    size_t n = ctx->ntable;
    pthread_mutex_unlock(&ctx->mu);
    return n;
}

size_t topo_admission_ctx_claimed(topo_admission_ctx *ctx)
{
    size_t n = 0;
    pthread_mutex_lock(&ctx->mu);
    for (size_t i = 0; i < ctx->ntable; i++)
        for (size_t j = 0; j < ctx->table[i].nslots; j++)
            n += ctx->table[i].slots[j].claimant != NULL;
    pthread_mutex_unlock(&ctx->mu);
    return n;
}

/* --- small helpers ----------------------------------------------------------------- */

static char *pfmt(topo_pool *pool, const char *fmt, ...) TOPO_PRINTF(2, 3);
static char *pfmt(topo_pool *pool, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = topo_pool_alloc(pool, (size_t)n + 1);
    if (s == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* Non-negative decimal int32 (no sign, no spaces); -1 when not one. */
static int64_t parse_count(const char *s)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX)
        return -1;
    return v;
}

/* s cut to max bytes ending in "..." (at a UTF-8 boundary). */
static char *cut(topo_pool *pool, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return topo_pool_strdup(pool, s);
    size_t keep = max - 3;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--;
    char *t = topo_pool_alloc(pool, keep + 4);
    if (t == NULL)
        return NULL;
    memcpy(t, s, keep);
    memcpy(t + keep, "...", 4);
    return t;
}

static const topo_admission_owner *controller_owner(const topo_admission_pod *pod)
{
    for (size_t i = 0; i < pod->nowners; i++)
        if (pod->owners[i].controller && pod->owners[i].uid && pod->owners[i].uid[0])
            return &pod->owners[i];
    return NULL;
}

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* --- PodSet identity ---------------------------------------------------------------- */

typedef struct podset_id {
    const char *key;      /* PodSet key */
    int32_t size;         /* pods in the PodSet */
    int64_t rank;         /* -1: none */
    const char *identity; /* this pod, for idempotent claims */
} podset_id;

/* 0, or TOPO_EINVALID with a message for a bad annotation/label value. */
static int identify(podset_id *id, const topo_admission_request *req, topo_pool *pool,
                    topo_err *err)
{
    const topo_admission_pod *pod = &req->pod;
    const char *ns = nonempty(pod->namespace_) ? pod->namespace_
                     : req->namespace_          ? req->namespace_
                                                : "";
    int64_t explicit_size = 0;
    if (pod->podset_size != NULL) {
        explicit_size = parse_count(pod->podset_size);
        if (explicit_size < 1 || explicit_size > TOPO_MAX_PODSET_COUNT)
            return topo_err_set(err, TOPO_EINVALID,
                                "annotation %s: \"%s\" is not a pod count in 1..%d",
                                TOPO_ADMISSION_PODSET_SIZE_ANNOTATION, pod->podset_size,
                                TOPO_MAX_PODSET_COUNT);
    }
    id->rank = -1;
    if (pod->job_completion_index != NULL) {
        id->rank = parse_count(pod->job_completion_index);
        if (id->rank < 0)
            return topo_err_set(err, TOPO_EINVALID,
                                "batch.kubernetes.io/job-completion-index: \"%s\" is not an index",
                                pod->job_completion_index);
    }
    const topo_admission_owner *owner = controller_owner(pod);
    id->size = explicit_size > 0 ? (int32_t)explicit_size : 1;
    if (nonempty(pod->pod_group_name)) {
        id->key = pfmt(pool, "%s/pod-group/%s", ns, pod->pod_group_name);
        if (pod->pod_group_total_count != NULL) {
            int64_t n = parse_count(pod->pod_group_total_count);
            if (n < 1 || n > TOPO_MAX_PODSET_COUNT)
                return topo_err_set(err, TOPO_EINVALID,
                                    "annotation kueue.x-k8s.io/pod-group-total-count: \"%s\" is "
                                    "not a pod count in 1..%d",
                                    pod->pod_group_total_count, TOPO_MAX_PODSET_COUNT);
            id->size = (int32_t)n;
        }
    } else if (nonempty(pod->controller_uid) || nonempty(pod->job_name)) {
        id->key = pfmt(pool, "%s/job/%s", ns,
                       nonempty(pod->controller_uid) ? pod->controller_uid : pod->job_name);
    } else if (explicit_size > 0 && owner != NULL) {
        id->key = pfmt(pool, "%s/owner/%s", ns, owner->uid);
    } else if (explicit_size > 0 && nonempty(pod->generate_name)) {
        id->key = pfmt(pool, "%s/generate-name/%s", ns, pod->generate_name);
    } else if (nonempty(pod->name)) {
        id->key = pfmt(pool, "%s/pod/%s", ns, pod->name);
    } else if (owner != NULL && id->rank >= 0) {
        id->key = pfmt(pool, "%s/owner/%s/%lld", ns, owner->uid, (long long)id->rank);
    } else {
        /* a generateName pod with nothing else: only this request names it */
        id->key = pfmt(pool, "%s/request/%s", ns, req->uid);
    }
    if (id->rank >= 0)
        id->identity = pfmt(pool, "rank/%lld", (long long)id->rank);
    else if (nonempty(pod->name))
        id->identity = pfmt(pool, "pod/%s", pod->name);
    else
        id->identity = pfmt(pool, "request/%s", req->uid);
    if (id->key == NULL || id->identity == NULL)
        return topo_err_set(err, TOPO_ENOMEM, "out of memory");
    return 0;
}

/* --- the PodSet request -------------------------------------------------------------- */

static int build_spec(topo_podset_spec *ps, const topo_admission_pod *pod, int32_t count,
                      topo_err *err)
{
    memset(ps, 0, sizeof(*ps));
    ps->name = "main";
    ps->count = count;
    ps->requests = pod->requests;
    ps->nrequests = pod->nrequests;
    ps->required = pod->required_topology;
    ps->preferred = pod->preferred_topology;
    ps->unconstrained = pod->unconstrained_topology != NULL &&
                        strcmp(pod->unconstrained_topology, "true") == 0;
    ps->slice_required = pod->slice_required_topology;
    if (pod->slice_size != NULL) {
        int64_t n = parse_count(pod->slice_size);
        if (n < 1)
            return topo_err_set(err, TOPO_EINVALID,
                                "annotation kueue.x-k8s.io/podset-slice-size: \"%s\" is not a "
                                "positive count",
                                pod->slice_size);
        ps->slice_size = (int32_t)n;
    }
    ps->group = pod->group_name;
    ps->node_selector = pod->node_selector;
    ps->nnode_selector = pod->nnode_selector;
    return 0;
}

/* "16 pod(s) x {cpu: 32000, nvidia.com/gpu: 8} in one topology.topo.io/rack (required)" */
static char *describe_need(topo_pool *pool, const topo_podset_spec *ps)
{
    char req[512];
    size_t off = 0;
    req[0] = '\0';
    for (size_t i = 0; i < ps->nrequests && off < sizeof req; i++) {
        int n = snprintf(req + off, sizeof req - off, "%s%s: %lld", i ? ", " : "",
                         ps->requests[i].name, (long long)ps->requests[i].amount);
        if (n < 0)
            break;
        off += (size_t)n;
    }
    const char *where = ps->required      ? ps->required
                        : ps->preferred   ? ps->preferred
                        : ps->slice_required ? ps->slice_required
                                            : NULL;
    const char *how = ps->required        ? "required"
                      : ps->preferred     ? "preferred"
                      : ps->slice_required ? "slice-required"
                                          : "unconstrained";
    if (where != NULL)
        return pfmt(pool, "%d pod(s) x {%s} in one %s (%s)", ps->count, req, where, how);
    return pfmt(pool, "%d pod(s) x {%s} (%s)", ps->count, req, how);
}

/* --- reservations ------------------------------------------------------------------- */

/* The assignment as compact JSON in pool, for the pods' annotation. */
static char *assignment_json(const topo_assignment *a, topo_pool *pool)
{
    json_t *doc = topo_codec_assignment_json(a);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    char *out = text ? topo_pool_strdup(pool, text) : NULL;
    free(text);
    json_decref(doc);
    return out;
}

/* Copies the assignment into r (allocating from pool), one slot per pod. */
static int make_reservation(reservation *r, const char *key, int32_t size,
                            const topo_assignment *a, topo_pool *pool)
{
    memset(r, 0, sizeof(*r));
    size_t nslots = 0;
    for (size_t d = 0; d < a->ndomains; d++)
        nslots += a->domains[d].count > 0 ? (size_t)a->domains[d].count : 0;
    const char **levels = topo_pool_calloc(pool, a->nlevels + 1, sizeof(*levels));
    r->slots = topo_pool_calloc(pool, nslots + 1, sizeof(*r->slots));
    r->key = topo_pool_strdup(pool, key);
    r->assignment_json = assignment_json(a, pool);
    if (levels == NULL || r->slots == NULL || r->key == NULL || r->assignment_json == NULL)
        return -1;
    for (size_t i = 0; i < a->nlevels; i++)
        if ((levels[i] = topo_pool_strdup(pool, a->levels[i])) == NULL)
            return -1;
    r->levels = levels;
    r->nlevels = a->nlevels;
    r->size = size;
    size_t k = 0;
    for (size_t d = 0; d < a->ndomains; d++) {
        const char **values = topo_pool_calloc(pool, a->nlevels + 1, sizeof(*values));
        if (values == NULL)
            return -1;
        for (size_t i = 0; i < a->nlevels; i++)
            if ((values[i] = topo_pool_strdup(pool, a->domains[d].values[i])) == NULL)
                return -1;
        for (int32_t c = 0; c < a->domains[d].count; c++)
            r->slots[k++].values = values;
    }
    r->nslots = k;
    return 0;
}

static reservation *find_reservation(topo_admission_ctx *ctx, const char *key)
{
    for (size_t i = 0; i < ctx->ntable; i++)
        if (strcmp(ctx->table[i].key, key) == 0)
            return &ctx->table[i];
    return NULL;
}

/* The slot for identity/rank: its earlier claim, else the rank's slot, else
 * the first free one; -1 when every slot is taken. */
static long pick_slot(const reservation *r, const podset_id *id)
{
    for (size_t i = 0; i < r->nslots; i++)
        if (r->slots[i].claimant != NULL && strcmp(r->slots[i].claimant, id->identity) == 0)
            return (long)i;
    if (id->rank >= 0 && (size_t)id->rank < r->nslots)
        return (long)id->rank;
    for (size_t i = 0; i < r->nslots; i++)
        if (r->slots[i].claimant == NULL)
            return (long)i;
    return -1;
}

/* --- the answer ---------------------------------------------------------------------- */

typedef struct answer {
    topo_admission_response resp;
    topo_jsonpatch *patch;
    const char *warnings[2];
} answer;

static void warn(answer *a, const char *w)
{
    if (w != NULL && a->resp.nwarnings < 2)
        a->warnings[a->resp.nwarnings++] = w;
    a->resp.warnings = a->warnings;
}

static void refuse(answer *a, int code, const char *msg)
{
    a->resp.allowed = 0;
    a->resp.status_code = code;
    a->resp.status_message = msg;
}

/* Not fitting: the policy. */
static int no_fit(topo_admission_ctx *ctx, answer *a, const topo_admission_request *req,
                  const podset_id *id, const char *need, const char *failure,
                  topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    switch (ctx->policy) {
    case TOPO_ADMISSION_POLICY_DENY:
        refuse(a, 403,
               pfmt(pool, "topo-webhook: PodSet %s needs %s: %s", id->key, need, failure));
        return 0;
    case TOPO_ADMISSION_POLICY_IGNORE:
        warn(a, pfmt(pool, "topo-webhook: not placed: %s", failure));
        return 0;
    case TOPO_ADMISSION_POLICY_GATE:
    default:
        break;
    }
    topo_kv ann = {TOPO_ADMISSION_WAIT_REASON_ANNOTATION,
                   cut(pool, failure, TOPO_ADMISSION_WAIT_REASON_MAX)};
    if (ann.value == NULL)
        return -1;
    if (topo_jsonpatch_new(&a->patch) < 0)
        return -1;
    if (topo_admission_patch_gate(a->patch, &req->pod, TOPO_ADMISSION_WAIT_GATE, &err) < 0 ||
        topo_admission_patch_pod(a->patch, &req->pod, NULL, 0, &ann, 1, &err) < 0)
        return err.code == TOPO_ENOMEM ? -1 : (refuse(a, 500, pfmt(pool, "%s", err.text)), 0);
    a->resp.patch = a->patch;
    warn(a, pfmt(pool, "topo-webhook: gated until it fits: %s", failure));
    return 0;
}

/* A topology pod: place, reserve, claim, patch. */
static int place(topo_admission_ctx *ctx, answer *a, const topo_admission_request *req,
                 topo_pool *pool)
{
    topo_err err = TOPO_ERR_INIT;
    podset_id id;
    memset(&id, 0, sizeof id);
    topo_podset_spec ps;
    memset(&ps, 0, sizeof ps);
    int rc = identify(&id, req, pool, &err);
    if (rc == 0)
        rc = build_spec(&ps, &req->pod, id.size, &err);
    if (rc == TOPO_ENOMEM)
        return -1;
    if (rc < 0) {
        refuse(a, 400, pfmt(pool, "topo-webhook: %s", err.text));
        return 0;
    }

    const char *const *values = NULL;
    const char *const *levels = NULL;
    size_t nlevels = 0;
    const char *json = NULL, *failure = NULL;
    int full = 0;

    pthread_mutex_lock(&ctx->mu);
    reservation *r = find_reservation(ctx, id.key);
    reservation tmp;
    if (r == NULL) {
        topo_podset_result res;
        memset(&res, 0, sizeof res);
        rc = topo_engine_find(&res, ctx->snap, &ps, 1, NULL, &ctx->gates, pool, &err);
        if (rc == 0 && res.assignment == NULL)
            failure = res.failure ? topo_pool_strdup(pool, res.failure) : "does not fit";
        if (rc == 0 && res.assignment != NULL) {
            if (req->dry_run) {
                if (make_reservation(&tmp, id.key, id.size, res.assignment, pool) < 0)
                    rc = TOPO_ENOMEM;
                else
                    r = &tmp;
            } else {
                topo_pool *rp = topo_pool_create();
                if (ctx->ntable == ctx->cap) {
                    size_t ncap = ctx->cap ? ctx->cap * 2 : 16;
                    reservation *t = realloc(ctx->table, ncap * sizeof(*t));
                    if (t != NULL) {
                        ctx->table = t;
                        ctx->cap = ncap;
                    }
                }
                if (rp == NULL || ctx->ntable == ctx->cap ||
                    make_reservation(&ctx->table[ctx->ntable], id.key, id.size, res.assignment,
                                     rp) < 0) {
                    topo_pool_free(rp);
                    rc = TOPO_ENOMEM;
                } else {
                    r = &ctx->table[ctx->ntable++];
                    r->pool = rp;
                    /* charge the reservation as TAS usage, domain by domain */
                    const topo_assignment *as = res.assignment;
                    for (size_t d = 0; d < as->ndomains; d++) {
                        topo_err uerr = TOPO_ERR_INIT;
                        if (topo_snapshot_add_tas_usage(ctx->snap, as->domains[d].values,
                                                        as->nlevels, as->domains[d].count,
                                                        ps.requests, ps.nrequests, &uerr) < 0)
                            warn(a, pfmt(pool, "topo-webhook: usage not charged: %s",
                                         uerr.text));
                    }
                }
            }
        }
    }
    if (r != NULL) {
        long s = pick_slot(r, &id);
        if (s < 0) {
            full = 1;
        } else {
            if (!req->dry_run && r->slots[s].claimant == NULL) {
                r->slots[s].claimant = topo_pool_strdup(r->pool, id.identity);
                if (r->slots[s].claimant == NULL)
                    rc = TOPO_ENOMEM;
            }
            /* copies: the table may move once the lock is released */
            nlevels = r->nlevels;
            const char **lv = topo_pool_calloc(pool, nlevels + 1, sizeof(*lv));
            const char **vv = topo_pool_calloc(pool, nlevels + 1, sizeof(*vv));
            json = topo_pool_strdup(pool, r->assignment_json);
            if (lv == NULL || vv == NULL || json == NULL)
                rc = TOPO_ENOMEM;
            for (size_t i = 0; rc == 0 && i < nlevels; i++) {
                lv[i] = topo_pool_strdup(pool, r->levels[i]);
                vv[i] = topo_pool_strdup(pool, r->slots[s].values[i]);
                if (lv[i] == NULL || vv[i] == NULL)
                    rc = TOPO_ENOMEM;
            }
            levels = lv;
            values = vv;
        }
    }
    int32_t nslots = r != NULL ? (int32_t)r->nslots : 0;
    pthread_mutex_unlock(&ctx->mu);

    if (rc == TOPO_ENOMEM)
        return -1;
    if (rc < 0) {
        refuse(a, 400, pfmt(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    if (failure != NULL) {
        const char *need = describe_need(pool, &ps);
        return no_fit(ctx, a, req, &id, need ? need : "?", failure, pool);
    }
    if (full) {
        warn(a, pfmt(pool, "topo-webhook: PodSet %s: all %d slots taken, not placed", id.key,
                     nslots));
        return 0;
    }
    topo_kv *sel = topo_pool_calloc(pool, nlevels + 1, sizeof(*sel));
    if (sel == NULL)
        return -1;
    for (size_t i = 0; i < nlevels; i++) {
        sel[i].key = levels[i];
        sel[i].value = values[i];
    }
    topo_kv ann = {TOPO_ADMISSION_ASSIGNMENT_ANNOTATION, json};
    if (topo_jsonpatch_new(&a->patch) < 0)
        return -1;
    rc = topo_admission_patch_pod(a->patch, &req->pod, sel, nlevels, &ann, 1, &err);
    if (rc == TOPO_ENOMEM)
        return -1;
    if (rc < 0) {
        /* the pod pins a level elsewhere: its own selector wins */
        warn(a, pfmt(pool, "topo-webhook: %s", err.text));
        return 0;
    }
    a->resp.patch = a->patch;
    return 0;
}

static int error_body(char **out_body, size_t *out_len, int *out_status, int status,
                      const char *msg)
{
    json_t *doc = json_pack("{s:s}", "error", msg);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (text == NULL)
        return -1;
    *out_body = text;
    *out_len = strlen(text);
    *out_status = status;
    return 0;
}

int topo_admission_handle(topo_admission_ctx *ctx, const char *body, size_t len,
                          char **out_body, size_t *out_len, int *out_status)
{
    topo_admission_request req;
    topo_err err = TOPO_ERR_INIT;
    answer a;
    int ret = -1;

    *out_body = NULL;
    *out_len = 0;
    *out_status = 500;
    memset(&a, 0, sizeof a);
    a.resp = (topo_admission_response)TOPO_ADMISSION_RESPONSE_INIT;
    topo_pool *pool = topo_pool_create();
    if (pool == NULL)
        return -1;
    int rc = topo_admission_decode(&req, body, len, pool, &err);
    if (rc == TOPO_ENOMEM)
        goto done;
    if (req.uid == NULL) {
        char msg[TOPO_ERR_TEXT_MAX + 40];
        snprintf(msg, sizeof msg, "malformed AdmissionReview: %s",
                 rc < 0 ? err.text : "no request.uid");
        ret = error_body(out_body, out_len, out_status, rc == TOPO_ELIMIT ? 413 : 400, msg);
        goto done;
    }
    a.resp.uid = req.uid;
    if (rc < 0) {
        refuse(&a, 400, pfmt(pool, "topo-webhook: malformed AdmissionReview: %s", err.text));
    } else if (topo_admission_classify(&req) == TOPO_ADMISSION_TOPOLOGY_POD) {
        if (place(ctx, &a, &req, pool) < 0)
            goto done;
    }
    topo_err_clear(&err);
    if (topo_admission_encode(out_body, out_len, &a.resp, &err) < 0)
        goto done;
    *out_status = 200;
    ret = 0;
done:
    topo_jsonpatch_free(a.patch);
    topo_pool_free(pool);
    return ret;
}
