/* Force-included into every file of the reference engine (see README.md):
 * its external names get a ref_ prefix so that it links beside lib/topo's. */
#ifndef TOPO_REF_RENAME_H
#define TOPO_REF_RENAME_H
#define eng_fmt ref_eng_fmt
#define eng_not_fit ref_eng_not_fit
#define eng_match_node ref_eng_match_node
#define eng_balanced_apply ref_eng_balanced_apply
#define eng_balanced_best ref_eng_balanced_best
#define eng_cmp_values ref_eng_cmp_values
#define eng_fill_counts ref_eng_fill_counts
#define eng_find_assignment ref_eng_find_assignment
#define eng_find_level ref_eng_find_level
#define eng_req_vec ref_eng_req_vec
#define eng_sort_by ref_eng_sort_by
#define eng_union_existing ref_eng_union_existing
#define eng_validate_selectors ref_eng_validate_selectors
#define eng_add_assumed ref_eng_add_assumed
#define eng_fill_helper ref_eng_fill_helper
#define eng_stats_add ref_eng_stats_add
#define eng_kids ref_eng_kids
#define eng_lower ref_eng_lower
#define eng_sorted ref_eng_sorted
#define eng_update_counts ref_eng_update_counts
#define topo_engine_find topo_ref_engine_find
#define topo_gates_init topo_ref_gates_init
#define topo_gates_set topo_ref_gates_set
#endif
