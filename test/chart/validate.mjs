// Validates Kubernetes objects against their kind's OpenAPI schema, as
// compiled by npm's kubernetes-models (and its cert-manager and
// prometheus-operator siblings for the CRDs the chart renders).
//
//   node validate.mjs NODE_MODULES OBJECTS.json
//
// OBJECTS.json: [{"source": "...", "object": {...}}, ...]. Prints one line
// per problem ("source: Kind/name: /path: message") and exits 1 when there
// is any; a kind without a schema here is a problem too.
//
// The schemas say which fields exist but, like the API server's own OpenAPI
// documents, not that others are forbidden: the API server drops or refuses
// an unknown field (kubectl --validate=strict) where the schema alone lets it
// pass. So every object is also checked for fields the validator never looked
// at: it is handed a Proxy that records which properties the compiled
// validator reads; an object whose keys it enumerated is a map (labels), one
// it read nothing of is free-form (x-kubernetes-preserve-unknown-fields), and
// any other key it did not read is unknown.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [modules, input] = process.argv.slice(2);
if (!modules || !input) {
  console.error("usage: node validate.mjs NODE_MODULES OBJECTS.json");
  process.exit(2);
}

const CORE = ["kubernetes-models", "IoK8sApi"];
const CERT = ["@kubernetes-models/cert-manager",
              "ComGithubCertManagerCertManagerPkgApisCertmanagerV1"];
const PROM = ["@kubernetes-models/prometheus-operator",
              "ComGithubPrometheusOperatorPrometheusOperatorPkgApisMonitoringV1"];
// apiVersion/kind -> [package, schema module]
const SCHEMAS = {
  "v1/ConfigMap": [CORE[0], CORE[1] + "CoreV1ConfigMap"],
  "v1/Secret": [CORE[0], CORE[1] + "CoreV1Secret"],
  "v1/Service": [CORE[0], CORE[1] + "CoreV1Service"],
  "v1/ServiceAccount": [CORE[0], CORE[1] + "CoreV1ServiceAccount"],
  "v1/ResourceQuota": [CORE[0], CORE[1] + "CoreV1ResourceQuota"],
  "apps/v1/Deployment": [CORE[0], CORE[1] + "AppsV1Deployment"],
  "apps/v1/DaemonSet": [CORE[0], CORE[1] + "AppsV1DaemonSet"],
  "batch/v1/Job": [CORE[0], CORE[1] + "BatchV1Job"],
  "policy/v1/PodDisruptionBudget": [CORE[0], CORE[1] + "PolicyV1PodDisruptionBudget"],
  "networking.k8s.io/v1/NetworkPolicy": [CORE[0], CORE[1] + "NetworkingV1NetworkPolicy"],
  "rbac.authorization.k8s.io/v1/ClusterRole": [CORE[0], CORE[1] + "RbacV1ClusterRole"],
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding":
    [CORE[0], CORE[1] + "RbacV1ClusterRoleBinding"],
  "rbac.authorization.k8s.io/v1/Role": [CORE[0], CORE[1] + "RbacV1Role"],
  "rbac.authorization.k8s.io/v1/RoleBinding": [CORE[0], CORE[1] + "RbacV1RoleBinding"],
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration":
    [CORE[0], CORE[1] + "AdmissionregistrationV1MutatingWebhookConfiguration"],
  "cert-manager.io/v1/Certificate": [CERT[0], CERT[1] + "Certificate"],
  "cert-manager.io/v1/Issuer": [CERT[0], CERT[1] + "Issuer"],
  "cert-manager.io/v1/ClusterIssuer": [CERT[0], CERT[1] + "ClusterIssuer"],
  "monitoring.coreos.com/v1/ServiceMonitor": [PROM[0], PROM[1] + "ServiceMonitor"],
  "monitoring.coreos.com/v1/PrometheusRule": [PROM[0], PROM[1] + "PrometheusRule"],
};

async function validator(key) {
  const [pkg, name] = SCHEMAS[key];
  // By file: the CRD packages do not export their _schemas.
  const file = path.join(modules, pkg, "_schemas", name + ".js");
  return (await import(pathToFileURL(file).href)).validate;
}

// One Proxy and one record per object of the document (by identity), so that
// reads through any path to it count.
function tracker() {
  const proxies = new WeakMap();
  const records = [];
  function wrap(target, where) {
    if (target === null || typeof target !== "object") return target;
    let p = proxies.get(target);
    if (p) return p;
    const rec = { target, where, read: new Set(), enumerated: false };
    records.push(rec);
    p = new Proxy(target, {
      get(t, k, r) {
        const v = Reflect.get(t, k, r);
        if (typeof k !== "string") return v;
        rec.read.add(k);
        return v !== null && typeof v === "object" ? wrap(v, where + "/" + k) : v;
      },
      has(t, k) {
        if (typeof k === "string") rec.read.add(k);
        return Reflect.has(t, k);
      },
      ownKeys(t) {
        rec.enumerated = true;
        return Reflect.ownKeys(t);
      },
    });
    proxies.set(target, p);
    return p;
  }
  return { wrap, records };
}

function unknownFields(records) {
  const out = [];
  for (const r of records) {
    if (Array.isArray(r.target) || r.enumerated || r.read.size === 0) continue;
    for (const k of Object.keys(r.target))
      if (!r.read.has(k)) out.push(`${r.where}/${k}: unknown field`);
  }
  return out;
}

const items = JSON.parse(readFileSync(input, "utf8"));
const cache = new Map();
let problems = 0;
for (const { source, object } of items) {
  const key = `${object.apiVersion}/${object.kind}`;
  const label = `${source}: ${object.kind}/${object.metadata?.name}`;
  if (!SCHEMAS[key]) {
    console.log(`${label}: no schema for ${key} in test/chart/validate.mjs`);
    problems++;
    continue;
  }
  if (!cache.has(key)) cache.set(key, await validator(key));
  const validate = cache.get(key);
  const t = tracker();
  const ok = validate(t.wrap(object, ""));
  const errors = ok ? [] : (validate.errors || []).map(
    (e) => `${e.instancePath || "/"}: ${e.message || e.keyword} ${JSON.stringify(e.params)}`);
  for (const m of [...errors, ...unknownFields(t.records)]) {
    console.log(`${label}: ${m}`);
    problems++;
  }
}
console.log(`validate.mjs: ${items.length} objects, ${problems} problems`);
process.exit(problems ? 1 : 0);
