/* Kubernetes name syntax, checked once for every layer: label keys and
 * values (apimachinery v0.36 IsQualifiedName / IsValidLabelValue, with its
 * messages word for word), DNS-1123 subdomains (node and object names) and
 * DNS-1123 labels (a Kueue Topology's name). Pure functions over strings:
 * the engine, Kueue's rules, the webhook's configuration, topo-sync's plan
 * and label writer and the CLI all call these. */
#ifndef TOPO_LABELSYNTAX_H
#define TOPO_LABELSYNTAX_H

#include <stddef.h>

/* IsLabelKey returns at most three messages. */
#define TOPO_LABEL_MAX_KEY_ERRORS 4

/* Every message apimachinery's IsLabelKey gives for key (static strings),
 * in its order, into msgs; 0 when the key is valid. key is not NULL. */
size_t topo_label_key_errors(const char *key, const char *msgs[TOPO_LABEL_MAX_KEY_ERRORS]);

/* 1 when valid; else 0 with the first of Kubernetes' messages in why
 * ("name part must be no more than 63 bytes"); why may be NULL. A NULL key
 * is invalid; a NULL value is the empty one (valid). */
int topo_label_key_valid(const char *key, char *why, size_t why_size);
int topo_label_value_valid(const char *value, char *why, size_t why_size);

/* 1 when s is a DNS-1123 subdomain (IsDNS1123Subdomain: at most 253
 * characters, dot-separated lower-case alphanumeric labels with '-'
 * inside): what Kubernetes takes as a node name. */
int topo_dns_subdomain_valid(const char *s);

/* 1 when name is one DNS-1123 label (1..63 of [a-z0-9-], alphanumerics at
 * both ends); else 0 with why ("the name has ...") when why is not NULL. */
int topo_dns_label_valid(const char *name, char *why, size_t why_size);

#endif
