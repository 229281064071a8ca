/* TEMPORARY: link stubs while the model and engine are written. */
#include "topo/engine.h"
#include "topo/model.h"

int topo_snapshot_create(topo_snapshot **out, const topo_snapshot_opts *opts, topo_err *err)
{ (void)out; (void)opts; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
void topo_snapshot_free(topo_snapshot *snap) { (void)snap; }
int topo_snapshot_add_node(topo_snapshot *snap, const topo_node_spec *node, topo_err *err)
{ (void)snap; (void)node; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
int topo_snapshot_add_pod_usage(topo_snapshot *snap, const char *node_name, const topo_resource *requests, size_t nrequests, int *out_ignored, topo_err *err)
{ (void)snap; (void)node_name; (void)requests; (void)nrequests; (void)out_ignored; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
int topo_snapshot_add_tas_usage(topo_snapshot *snap, const char *const *values, size_t nvalues, int32_t count, const topo_resource *requests, size_t nrequests, topo_err *err)
{ (void)snap; (void)values; (void)nvalues; (void)count; (void)requests; (void)nrequests; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
int topo_snapshot_build(topo_snapshot *snap, topo_err *err) { (void)snap; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
const char *topo_snapshot_topology_name(const topo_snapshot *snap) { (void)snap; return ""; }
size_t topo_snapshot_level_count(const topo_snapshot *snap) { (void)snap; return 0; }
const char *topo_snapshot_level(const topo_snapshot *snap, size_t i) { (void)snap; (void)i; return ""; }
int topo_snapshot_level_index(const topo_snapshot *snap, const char *label) { (void)snap; (void)label; return -1; }
size_t topo_snapshot_node_count(const topo_snapshot *snap) { (void)snap; return 0; }
int topo_snapshot_walk(const topo_snapshot *snap, const char *resource, topo_domain_visit_fn fn, void *payload)
{ (void)snap; (void)resource; (void)fn; (void)payload; return TOPO_EUNSUPPORTED; }
void topo_gates_init(topo_gates *gates) { (void)gates; }
int topo_gates_set(topo_gates *gates, const char *name, int on, topo_err *err) { (void)gates; (void)name; (void)on; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
int topo_engine_find(topo_podset_result *out, const topo_snapshot *snap, const topo_podset_spec *podsets, size_t npodsets, const topo_workload_spec *workload, const topo_gates *gates, topo_pool *pool, topo_err *err)
{ (void)out; (void)snap; (void)podsets; (void)npodsets; (void)workload; (void)gates; (void)pool; return topo_err_set(err, TOPO_EUNSUPPORTED, "not yet"); }
