/* Every size limit of topo, in one place. */
#ifndef TOPO_LIMITS_H
#define TOPO_LIMITS_H

/* Largest inventory file (NodeList JSON, pods JSON, fixture YAML) we read. */
#define TOPO_MAX_INVENTORY_FILE (512u * 1024u * 1024u)
/* Largest PodSet manifest (a Pod or a Job). */
#define TOPO_MAX_MANIFEST_FILE (4u * 1024u * 1024u)
/* Largest conformance case file. */
#define TOPO_MAX_CASES_FILE (64u * 1024u * 1024u)
/* Longest line of a conformance known-failures file. */
#define TOPO_MAX_KNOWN_FAILURES_LINE 1024
/* Longest verdict text of a conformance case; longer ones end in "...". */
#define TOPO_MAX_CASE_REASON (32u * 1024u)
/* Deepest nesting of YAML collections we build, and of a JSON document
 * topo-webhook passes through (jansson's own limit is 2048). Deeper input
 * is TOPO_ELIMIT. */
#define TOPO_MAX_DOCUMENT_DEPTH 128
/* Significant digits of a quantity (leading and trailing zeros are not
 * counted). A quantity with more is TOPO_ELIMIT. */
#define TOPO_MAX_QUANTITY_DIGITS 256
/* Longest Kubernetes object name or namespace we accept (a DNS subdomain). */
#define TOPO_MAX_OBJECT_NAME 253u
/* Kubernetes caps label values at 63 and keys at 253 (+prefix). */
#define TOPO_MAX_LABEL_KEY 317
#define TOPO_MAX_LABEL_VALUE 63
/* Longest object name that is a DNS-1123 subdomain, node names included. */
#define TOPO_MAX_NODE_NAME 253
/* Kueue allows 1..16 topology levels. */
#define TOPO_MAX_LEVELS 16
/* Kueue allows at most 3 slice layers. */
#define TOPO_MAX_SLICE_LAYERS 3
/* Pods per PodSet we accept: no more than a cluster can run (Kubernetes
 * supports up to 150,000 pods in all; Indexed Jobs allow 100,000
 * completions). A reservation holds a row per pod, so a larger bound only
 * lets one PodSet keep the cache busy for seconds: fuzz_reservation_record
 * found a record of 676,077 slots that took 16 s to adopt. */
#define TOPO_MAX_PODSET_COUNT 150000
/* Pods in one Kueue pod group: each of its pods reads the group's members
 * back while the group waits to be complete. */
#define TOPO_MAX_POD_GROUP_COUNT 10000
/* PodSets of one Kueue Workload (its API's maxItems): the roles of a pod
 * group. */
#define TOPO_MAX_POD_GROUP_ROLES 8

/* topoassign generate: the largest cluster, the largest value of each
 * shape option, and of the GPUs per node. */
#define TOPO_MAX_GEN_NODES 1000000u
#define TOPO_MAX_GEN_FANOUT 100000u
#define TOPO_MAX_GEN_GPUS 64u

/* topoassign simulate (topo/simulate.h): the largest CSV trace file and
 * line, the most jobs a trace holds (generated or read; Helios's 3.4 million
 * jobs would need a larger limit, a few hundred bytes each), the longest job
 * id, the most pods of one job and GPUs of one pod, the latest arrival and
 * longest duration in seconds (about 317 years), the most annotations on one
 * job (Kueue has seven PodSet annotations, each allowed once), and the most
 * distinct topology requests in one trace. */
#define TOPO_MAX_SIM_TRACE_FILE (256u * 1024u * 1024u)
#define TOPO_MAX_SIM_LINE 8192u
#define TOPO_MAX_SIM_JOBS 2000000u
#define TOPO_MAX_SIM_JOB_ID 253u
#define TOPO_MAX_SIM_PODS 100000u
#define TOPO_MAX_SIM_GPUS_PER_POD 1024u
#define TOPO_MAX_SIM_SECONDS 1e10
#define TOPO_MAX_SIM_ANNOTATIONS 8u
#define TOPO_MAX_SIM_REQUESTS 10000u
/* --seeds: runs per policy whose metrics one summary averages. */
#define TOPO_MAX_SIM_SEEDS 100u

/* Largest Kubernetes API response body (one page of a paged list, or one
 * object); pages are requested with limit=500 so this is generous. */
#define TOPO_MAX_K8S_RESPONSE (64u * 1024u * 1024u)
/* Largest single watch event line. */
#define TOPO_MAX_K8S_WATCH_EVENT (8u * 1024u * 1024u)
/* resourceVersions are opaque strings; this holds any the API server sends
 * (longer ones are TOPO_ELIMIT), NUL included. */
#define TOPO_K8S_RV_MAX 64
/* Longest Kubernetes API path + query we build. */
#define TOPO_K8S_MAX_PATH 8192u
/* Largest kubeconfig file. */
#define TOPO_MAX_KUBECONFIG (1u * 1024u * 1024u)
/* Largest service-account token, CA, serving certificate or key file. */
#define TOPO_MAX_CREDENTIAL_FILE (1u * 1024u * 1024u)
/* Largest ExecCredential a kubeconfig's exec plugin may print (a token or
 * a certificate and key are a few kilobytes). */
#define TOPO_MAX_EXEC_OUTPUT (1u * 1024u * 1024u)

/* Largest AdmissionReview request body: the API server's own limit on a
 * request (MaxRequestBodyBytes, 3 MiB). */
#define TOPO_MAX_ADMISSION_BODY (3u * 1024u * 1024u)
/* Largest topo-webhook configuration file. */
#define TOPO_MAX_CONFIG_FILE (1u * 1024u * 1024u)
/* Topologies one configuration (one admission handler) may hold. */
#define TOPO_MAX_TOPOLOGIES 16
/* nodeLabels of one topology. */
#define TOPO_MAX_TOPOLOGY_NODE_LABELS 64
/* Entries of maxUnclaimed.perNamespace, and of maxUnclaimed.total. */
#define TOPO_MAX_UNCLAIMED_CAPS 32
/* Longest reservation id a pod's annotation may name (the webhook's own
 * are far shorter). */
#define TOPO_MAX_RESERVATION_ID 1024
/* Gated PodSets the ungater looks at per round; the rest wait for a later
 * round. */
#define TOPO_MAX_UNGATER_PODS 65536u

/* What one topology pod may carry (topo-webhook refuses more with a 400
 * naming the field): the work of placing it grows with them (tolerations
 * and affinity terms are matched against every node). Kubernetes itself
 * bounds only the object's size. */
#define TOPO_MAX_POD_CONTAINERS 256      /* containers, and initContainers */
#define TOPO_MAX_POD_TOLERATIONS 256
#define TOPO_MAX_POD_SELECTOR_LABELS 256 /* nodeSelector entries */
#define TOPO_MAX_POD_AFFINITY_TERMS 64   /* required terms, and preferred ones */
#define TOPO_MAX_POD_TERM_EXPRESSIONS 64 /* matchExpressions of one term */
#define TOPO_MAX_POD_EXPRESSION_VALUES 512

/* Longest URL (base URL + path and query) the HTTP client sends. */
#define TOPO_MAX_HTTP_URL (16u * 1024u)
/* Longest HTTP method name accepted. */
#define TOPO_MAX_HTTP_METHOD 16u
/* Most retries one HTTP request may be configured with. */
#define TOPO_MAX_HTTP_RETRIES 100

/* Most series one metrics family holds (topo_metrics_get): a label fed
 * from requests or from the cluster cannot grow memory without bound. */
#define TOPO_MAX_METRIC_SERIES 1024u

/* Most checks one health port holds (topo_probe), readiness and liveness
 * each, and the longest check name (a path segment: /readyz/<name>). */
#define TOPO_MAX_PROBE_CHECKS 32
#define TOPO_MAX_PROBE_CHECK_NAME 63

/* Most hosts, switches or cables one source's facts may hold (topo-sync):
 * Selene's fabric has 4,341 adapters; a fabric 200 times larger still fits. */
#define TOPO_MAX_FACTS_ENTRIES 1000000u
/* Duplicate GUIDs a fabric source logs one by one per read (each is also a
 * conflict of the plan, which lists them all); past it, one line says how
 * many more. A hostile inventory must not flood the log every round. */
#define TOPO_MAX_LOGGED_DUPLICATES 10u
/* Largest facts document (topo/facts_json.h) topo-sync stores or reads back:
 * one source's facts for 10,000 nodes of 8 rails are about 2.4 MB (docs/sync.md);
 * TOPO_MAX_FACTS_ENTRIES hosts, switches and cables would not fit, a fabric
 * 50 times larger does. */
#define TOPO_MAX_FACTS_DOCUMENT (256u * 1024u * 1024u)
/* The cache's store of them (topo/cache_facts.h): the longest source name,
 * and the longest failure message kept (longer ones are cut). */
#define TOPO_MAX_FACTS_SOURCE_NAME 256u
#define TOPO_MAX_FACTS_ERROR 4096u
/* Largest topo-sync configuration file. */
#define TOPO_MAX_SYNC_CONFIG (1u * 1024u * 1024u)

/* Largest body of each topo-sync source's payload we parse, sized to real
 * payloads (docs/sync.md "Limits of a source's payload"), each parsed
 * within topo_codec_source_budget (below). lldpd: one host's neighbours (a
 * 33-port switch's is 33 KB pretty-printed, 14 KB compact; a host has a
 * handful of ports). NetBox: one page of at most 1,000 objects
 * (MAX_PAGE_SIZE): 1,000 devices of the pynetbox sample are 2 MB, so 8
 * times larger devices (config contexts) still fit. UFM: the whole systems
 * or links list in one response, read a record at a time (3,055 systems are
 * 3.9 MB; the links of a 10,000-node fabric, 120,064 records, are 74 MB
 * pretty-printed as UFM prints them: 256 MiB holds about 30,000 nodes;
 * over HTTP only the switches are asked for). */
#define TOPO_MAX_LLDP_DOCUMENT (1u * 1024u * 1024u)
#define TOPO_MAX_NETBOX_PAGE (16u * 1024u * 1024u)
#define TOPO_MAX_UFM_RESPONSE (256u * 1024u * 1024u)
/* An LLDP collector's one response over HTTP (topo/fetch.h): every host's
 * document in one JSON object, read a host's document at a time (each at
 * most TOPO_MAX_LLDP_DOCUMENT): 2,000 hosts of 14 KB (compact) fit; larger
 * fleets give the documents as files (--lldp-dir). */
#define TOPO_MAX_LLDP_RESPONSE (32u * 1024u * 1024u)
/* Hosts in that one response: each costs its facts and labels (about 540
 * bytes, whatever its document's size), so a response of a million
 * neighbourless hosts (`"h1":{"lldp":{}}`, 20 bytes each) took 554 MiB.
 * The largest GPU fleets are tens of thousands of nodes. */
#define TOPO_MAX_LLDP_HOSTS 100000u
/* The memory jansson may take to parse one such payload
 * (topo_codec_json_parse_source): TOPO_PARSE_MEMORY_RATIO times its size
 * (the real payloads measured take 3.7 to 6.4 times their size
 * pretty-printed, 9 to 15.7 times compact: lldpd's documents are the most),
 * at least TOPO_MIN_PARSE_MEMORY (a tiny document's fixed costs), at most
 * TOPO_MAX_PARSE_MEMORY (with the body and the rest, topo-sync stays well
 * inside the chart's 1 GiB). Past it the payload is TOPO_ELIMIT: an array of
 * empty objects takes over 70 times its size. Nesting deeper than
 * TOPO_MAX_SOURCE_DEPTH is refused too (real payloads nest 12 deep). */
#define TOPO_PARSE_MEMORY_RATIO 16u
#define TOPO_MIN_PARSE_MEMORY (1u * 1024u * 1024u)
#define TOPO_MAX_PARSE_MEMORY (384u * 1024u * 1024u)
#define TOPO_MAX_SOURCE_DEPTH 64
/* Most pages one NetBox list may take over HTTP (topo/fetch.h): a `next`
 * link that never ends stops here. At 1,000 objects a page that is
 * TOPO_MAX_FACTS_ENTRIES objects several times over. */
#define TOPO_MAX_NETBOX_PAGES 10000u

/* Largest ibnetdiscover dump topo-sync reads: Selene's compute fabric (666
 * switches, 4,341 adapters) is 2.8 MB; one 180 times larger still fits. */
#define TOPO_MAX_IBNETDISCOVER_DUMP (512u * 1024u * 1024u)
/* Largest ibnetdiscover node-name map (one line per GUID). */
#define TOPO_MAX_NODE_NAME_MAP (64u * 1024u * 1024u)

#endif
