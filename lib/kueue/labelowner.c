/* Which label keys topo may own (include/topo/labelowner.h): the shape of an
 * owned prefix, the namespaces of other owners, whole-prefix ownership, and
 * topograph's keys. */
#include "topo/labelowner.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topo/error.h"
#include "topo/kueue.h"
#include "topo/labelsyntax.h"
#include "topo/limits.h"

/* Namespaces topo never takes as its prefix: the domain and every
 * subdomain of it. A prefix here would make topo-sync remove the labels of
 * their owner from every node (a DaemonSet selecting kubernetes.io/os:
 * linux loses every node). Kubernetes reserves its two; the others label
 * the same GPU nodes topo does, in the clusters topo is made for. One
 * place: add an owner here, with why, and docs/sync.md "The prefix rule". */
static const struct {
    const char *domain;
    const char *why;
} foreign[] = {
    {"kubernetes.io", "Kubernetes reserves it for its own labels (kubernetes.io/os, "
                      "node-role.kubernetes.io/, node.kubernetes.io/, topology.kubernetes.io/, "
                      "Node Feature Discovery's feature.node.kubernetes.io/)"},
    {"k8s.io", "Kubernetes reserves it for its own labels"},
    {"x-k8s.io", "Kubernetes SIG projects label nodes under it (kueue.x-k8s.io/, "
                 "cluster.x-k8s.io/)"},
    {"nvidia.com", "NVIDIA's GPU Feature Discovery and GPU Operator label GPU "
                   "nodes under it"},
    {"topograph.run", "NVIDIA topograph labels nodes under it; topo writes exactly its tier and "
                      "domain keys, only with the topograph option"},
    {"amd.com", "AMD's GPU Operator labels GPU nodes under it"},
    {"intel.com", "Intel's device plugins label nodes under it"},
    {"cloud.google.com", "GKE labels nodes under it (node pools, accelerators, TPU topology)"},
    {"amazonaws.com", "EKS labels nodes under it (eks.amazonaws.com/, k8s.amazonaws.com/)"},
    {"karpenter.sh", "Karpenter labels the nodes it provisions under it"},
    {"k8s.aws", "Karpenter's AWS provider labels nodes under it"},
    {"azure.com", "AKS labels nodes under it (kubernetes.azure.com/)"},
    {"openshift.io", "OpenShift labels nodes under it (node.openshift.io/, "
                     "machine.openshift.io/)"},
    {"oraclecloud.com", "OKE labels nodes under it (oci.oraclecloud.com/)"},
};

/* 1 when the n bytes of domain are d or a subdomain of d. */
static int within(const char *domain, size_t n, const char *d)
{
    size_t m = strlen(d);
    if (n == m)
        return memcmp(domain, d, n) == 0;
    return n > m && domain[n - m - 1] == '.' && memcmp(domain + n - m, d, m) == 0;
}

static int refuse(char *why, size_t size, const char *fmt, ...) TOPO_PRINTF(3, 4);
static int refuse(char *why, size_t size, const char *fmt, ...)
{
    if (why != NULL && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return 0;
}

int topo_labelowner_prefix_valid(const char *prefix, char *why, size_t why_size)
{
    char domain[TOPO_MAX_NODE_NAME + 1];
    size_t n = prefix != NULL ? strlen(prefix) : 0;
    const char *slash = n > 0 ? strchr(prefix, '/') : NULL;
    if (n == 0)
        return refuse(why, why_size, "must not be empty");
    if (slash == NULL)
        return refuse(why, why_size,
                      "must end in '/' (a DNS subdomain and '/', e.g. "
                      "'topology.topo.io/')");
    if (slash != prefix + n - 1)
        return refuse(why, why_size,
                      "must be a DNS subdomain followed by exactly one '/' and "
                      "nothing else (e.g. 'topology.topo.io/')");
    size_t dn = n - 1;
    if (dn == 0 || dn > TOPO_MAX_NODE_NAME)
        return refuse(why, why_size,
                      "the part before '/' must be a DNS subdomain of 1 to 253 "
                      "characters");
    memcpy(domain, prefix, dn);
    domain[dn] = '\0';
    if (!topo_dns_subdomain_valid(domain))
        return refuse(why, why_size,
                      "the part before '/' must be a lowercase RFC 1123 "
                      "subdomain: lower case alphanumeric characters, '-' or '.', each "
                      "dot-separated part starting and ending with an alphanumeric character "
                      "(e.g. 'topology.topo.io')");
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++)
        if (within(domain, dn, foreign[i].domain))
            return refuse(why, why_size, "is under %s: %s", foreign[i].domain, foreign[i].why);
    return 1;
}

int topo_labelowner_under(const char *key, const char *prefix)
{
    if (key == NULL || prefix == NULL)
        return 0;
    size_t n = strlen(prefix);
    if (n < 2 || strchr(prefix, '/') != prefix + n - 1)
        return 0;
    return strncmp(key, prefix, n) == 0 && key[n] != '\0' && strchr(key + n, '/') == NULL;
}

int topo_labelowner_topograph_key(const char *key)
{
    static const size_t tier = sizeof TOPO_LABELOWNER_TOPOGRAPH_TIER - 1;
    if (key == NULL)
        return 0;
    if (strcmp(key, TOPO_LABELOWNER_TOPOGRAPH_DOMAIN) == 0 ||
        strcmp(key, TOPO_LABELOWNER_TOPOGRAPH_SUBDOMAIN) == 0)
        return 1;
    if (strncmp(key, TOPO_LABELOWNER_TOPOGRAPH_TIER, tier) != 0 || key[tier] == '\0')
        return 0;
    for (key += tier; *key != '\0'; key++)
        if (*key < '0' || *key > '9')
            return 0;
    return 1;
}
