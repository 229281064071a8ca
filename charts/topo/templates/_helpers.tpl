{{/*
Names. Kubernetes names are at most 63 characters; every define is
namespaced with the chart's name.
*/}}
{{- define "topo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "topo.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Each component's name: its objects' name and its ServiceAccount's. */}}
{{- define "topo.webhook.fullname" -}}
{{- printf "%s-webhook" (include "topo.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{- define "topo.sync.fullname" -}}
{{- printf "%s-sync" (include "topo.fullname" . | trunc 58 | trimSuffix "-") }}
{{- end }}

{{- define "topo.lldp.fullname" -}}
{{- printf "%s-lldp" (include "topo.fullname" . | trunc 58 | trimSuffix "-") }}
{{- end }}

{{- define "topo.release.fullname" -}}
{{- printf "%s-release" (include "topo.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{/* The uninstall hook's values are .Values.uninstall: its name, for
"topo.serviceAccountName". */}}
{{- define "topo.uninstall.fullname" -}}
{{- include "topo.release.fullname" . }}
{{- end }}

{{/* The uninstall hooks' annotations (release-hook.yaml), given the weight:
run before and after Helm deletes the release's objects. */}}
{{- define "topo.release.hook" -}}
helm.sh/hook: pre-delete,post-delete
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}

{{/* The Secret of the webhook's serving certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "topo.webhook.tlsSecretName" -}}
{{- printf "%s-tls" (include "topo.webhook.fullname" .) }}
{{- end }}

{{/* The Secret of the webhook's record keys: the operator's, or the chart's. */}}
{{- define "topo.webhook.recordKeySecretName" -}}
{{- default (printf "%s-record-keys" (include "topo.webhook.fullname" .)) .Values.webhook.recordKeys.existingSecret }}
{{- end }}

{{/* Where the record keys are mounted, one file per key of the Secret. */}}
{{- define "topo.webhook.recordKeyDir" -}}/etc/topo/record-keys{{- end }}

{{/* The DNS name the serving certificate is checked for: the Service's. */}}
{{- define "topo.webhook.serviceDNSName" -}}
{{- printf "%s.%s.svc" (include "topo.webhook.fullname" .) .Release.Namespace }}
{{- end }}

{{/* The Leases: the webhook's placer's and topo-sync's writer's, named for
the release (two installations in one namespace do not share one). Every
template and every command in the notes takes them from here. */}}
{{- define "topo.webhook.leaseName" -}}
{{- include "topo.webhook.fullname" . }}
{{- end }}
{{- define "topo.sync.leaseName" -}}
{{- include "topo.sync.fullname" . }}
{{- end }}

{{- define "topo.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels (helm.sh/docs/chart_best_practices/labels). Selectors use name,
instance and component only: never the version, which changes on upgrade.
*/}}
{{- define "topo.labels" -}}
helm.sh/chart: {{ include "topo.chart" . }}
{{ include "topo.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: topo
{{- include "topo.commonLabels" . }}
{{- end }}

{{/*
commonLabels, on every object (and every pod) besides the chart's own labels.
A key the chart sets itself is refused: the object would carry it twice.
*/}}
{{- define "topo.commonLabels" -}}
{{- $own := list "helm.sh/chart" "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/part-of" "app.kubernetes.io/component" }}
{{- range $k, $v := .Values.commonLabels }}
{{- if has $k $own }}
{{- fail (printf "commonLabels: %s is one of the chart's own labels" $k) }}
{{- end }}
{{- end }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "topo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "topo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Per component: pass (dict "ctx" $ "component" "webhook"). */}}
{{- define "topo.componentLabels" -}}
{{ include "topo.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
A pod template's labels, as one map: the component's (the chart's own and
commonLabels) with the component's podLabels over them. podLabels win over
commonLabels (a team label of its own for one component); a key of the
chart's own is refused (the pods would no longer match their selector).
No key can appear twice. Pass (dict "ctx" $ "component" "webhook" "values"
the component's values).
*/}}
{{- define "topo.podLabels" -}}
{{- $labels := include "topo.componentLabels" . | fromYaml }}
{{- $own := list "helm.sh/chart" "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/part-of" "app.kubernetes.io/component" }}
{{- range $k, $v := .values.podLabels }}
{{- if has $k $own }}
{{- fail (printf "%s.podLabels: %s is one of the chart's own labels" $.component $k) }}
{{- end }}
{{- $_ := set $labels $k $v }}
{{- end }}
{{- toYaml $labels }}
{{- end }}

{{/*
Annotations as one map: the chart's own ("own", a dict) and the operator's
("extra", named "field" in the message: webhook.podAnnotations), a key the
chart sets refused rather than rendered twice. Renders nothing when empty.
*/}}
{{- define "topo.mergedAnnotations" -}}
{{- $out := deepCopy (default dict .own) }}
{{- range $k, $v := .extra }}
{{- if hasKey $out $k }}
{{- fail (printf "%s: %s is set by the chart" $.field $k) }}
{{- end }}
{{- $_ := set $out $k $v }}
{{- end }}
{{- with $out }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/* Every pod's imagePullSecrets, from the list of Secret names. */}}
{{- define "topo.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The ServiceAccounts the chart creates are distinct: two components given
the same serviceAccount.name, both created, would be one object rendered
twice (AlreadyExists on install). Refused; to share one, create it in one
component and name it with create false in the other.
*/}}
{{- define "topo.serviceAccountsDistinct" -}}
{{- $created := dict }}
{{- $components := list "webhook" }}
{{- if .Values.sync.enabled }}
{{- $components = append $components "sync" }}
{{- if .Values.lldp.enabled }}
{{- $components = append $components "lldp" }}
{{- end }}
{{- end }}
{{- if .Values.uninstall.releaseGatedPods }}
{{- $components = append $components "uninstall" }}
{{- end }}
{{- range $components }}
{{- if (index $.Values .).serviceAccount.create }}
{{- $name := include "topo.serviceAccountName" (dict "ctx" $ "component" .) }}
{{- if hasKey $created $name }}
{{- fail (printf "%s.serviceAccount and %s.serviceAccount both create ServiceAccount %s: give them different names, or set create false on one (it then uses the other's)" (get $created $name) . $name) }}
{{- end }}
{{- $_ := set $created $name . }}
{{- end }}
{{- end }}
{{- end }}

{{- define "topo.componentSelectorLabels" -}}
{{ include "topo.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "topo.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The pods' security contexts: podSecurityContext and containerSecurityContext,
by default the restricted Pod Security profile (non-root uid 65532, read-only
root, no privilege escalation, no capabilities, seccomp RuntimeDefault). A key
set to null in the operator's values is gone from the defaults (Helm's merge),
e.g. runAsUser and fsGroup on OpenShift, whose SCC assigns its own.
*/}}
{{- define "topo.podSecurityContext" -}}
{{- toYaml (default dict .Values.podSecurityContext) }}
{{- end }}

{{- define "topo.containerSecurityContext" -}}
{{- toYaml (default dict .Values.containerSecurityContext) }}
{{- end }}

{{/*
The ServiceAccount a component's pods run as and its bindings name: the
chart's (<fullname>-<component>, or serviceAccount.name), or with
serviceAccount.create false the operator's, which must then be named.
Pass (dict "ctx" $ "component" "webhook").
*/}}
{{- define "topo.serviceAccountName" -}}
{{- $sa := (index .ctx.Values .component).serviceAccount }}
{{- if $sa.create }}
{{- default (include (printf "topo.%s.fullname" .component) .ctx) $sa.name }}
{{- else if $sa.name }}
{{- $sa.name }}
{{- else if eq .component "uninstall" }}
{{- fail "uninstall.serviceAccount.create false needs uninstall.serviceAccount.name: the existing ServiceAccount in the release namespace the hook's Job runs as, allowed to get, list and patch pods in every namespace (the chart then renders no RBAC for it)" }}
{{- else }}
{{- fail (printf "%s.serviceAccount.create false needs %s.serviceAccount.name: the existing ServiceAccount in the release namespace that the pods run as and the chart's roles are bound to" .component .component) }}
{{- end }}
{{- end }}

{{/*
A component's extraEnv, extraVolumes and extraVolumeMounts, after the
chart's own: a name the chart already uses is refused at render (the API
server would refuse the duplicate, or one would silently win). Pass (dict
"ctx" $ "component" "webhook" "volumes" (list of the chart's volume names)).
Renders the env entries; the volumes and mounts are rendered by
"topo.extraVolumes" and "topo.extraVolumeMounts".
*/}}
{{- define "topo.extraEnv" -}}
{{- $v := index .ctx.Values .component }}
{{- range $v.extraEnv }}
{{- if eq .name "POD_IP" }}
{{- fail (printf "%s.extraEnv: POD_IP is set by the chart (the pod's IP)" $.component) }}
{{- end }}
{{- end }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "topo.extraVolumes" -}}
{{- $v := index .ctx.Values .component }}
{{- range $v.extraVolumes }}
{{- if has .name $.volumes }}
{{- fail (printf "%s.extraVolumes: volume %s is one of the chart's (%s)" $.component .name (join ", " $.volumes)) }}
{{- end }}
{{- end }}
{{- with $v.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "topo.extraVolumeMounts" -}}
{{- with (index .ctx.Values .component).extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
A component's topologySpreadConstraints; one without a labelSelector gets
the component's pods (the usual intent, and the API server requires one to
spread anything). Pass (dict "ctx" $ "component" "webhook").
*/}}
{{- define "topo.topologySpreadConstraints" -}}
{{- $sel := include "topo.componentSelectorLabels" . | fromYaml }}
{{- $out := list }}
{{- range (index .ctx.Values .component).topologySpreadConstraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $sel) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- with $out }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Pod anti-affinity of a component's replicas on kubernetes.io/hostname: soft
(preferred), hard (required) or none. Pass (dict "ctx" $ "component"
"webhook" "mode" "soft"); renders the podAntiAffinity block or nothing.
*/}}
{{- define "topo.podAntiAffinity" -}}
{{- $sel := include "topo.componentSelectorLabels" . }}
{{- if eq .mode "soft" }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- $sel | nindent 12 }}
{{- else if eq .mode "hard" }}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- $sel | nindent 10 }}
{{- end }}
{{- end }}

{{/* The pod's IP, for the health port's address and the peer address. */}}
{{- define "topo.podIPEnv" -}}
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
{{- end }}

{{/*
topology.levels go coarsest first, as topo-sync refuses them otherwise
(--levels, exit 2): out of order, its plan nests them in this order while
a Kueue Topology lists them as given. Fails the render instead of a pod
that never starts. Unknown and repeated levels are the schema's.
*/}}
{{- define "topo.topology.levelsInOrder" -}}
{{- $order := list "datacenter" "spine" "leaf" "rack" "nvlink" "hostname" }}
{{- $prev := -1 }}
{{- $prevName := "" }}
{{- range .Values.topology.levels }}
{{- $level := . }}
{{- $at := -1 }}
{{- range $i, $o := $order }}{{ if eq $o $level }}{{ $at = $i }}{{ end }}{{ end }}
{{- if and (ge $at 0) (le $at $prev) }}
{{- fail (printf "topology.levels: %s before %s: levels go coarsest first (datacenter, spine, leaf, rack, nvlink, hostname)" $prevName $level) }}
{{- end }}
{{- $prev = $at }}
{{- $prevName = $level }}
{{- end }}
{{- end }}

{{/*
The webhook's configuration file: webhook.config, with one topology named
"default" over topology.levels when it names none, and the packing block
from webhook.packing when packing is on (off: no block at all, the file as
before packing existed; level "" is left out: the webhook's default).
*/}}
{{- define "topo.webhook.config" -}}
{{- include "topo.topology.levelsInOrder" . }}
{{- include "topo.webhook.packingResources" . }}
{{- $cfg := deepCopy .Values.webhook.config }}
{{- $p := .Values.webhook.packing }}
{{- if $p.enabled }}
{{- $packing := dict "enabled" true "resources" $p.resources "mode" $p.mode }}
{{- if $p.level }}
{{- $_ := set $packing "level" $p.level }}
{{- end }}
{{- $_ := set $cfg "packing" $packing }}
{{- end }}
{{- if not $cfg.topologies }}
{{- $levels := list }}
{{- range .Values.topology.levels }}
{{- if eq . "hostname" }}
{{- $levels = append $levels "kubernetes.io/hostname" }}
{{- else }}
{{- $levels = append $levels (printf "%s%s" $.Values.topology.prefix .) }}
{{- end }}
{{- end }}
{{- $_ := set $cfg "topologies" (list (dict "name" "default" "levels" $levels)) }}
{{- end }}
{{- include "topo.webhook.packingLevel" $cfg }}
{{- toYaml $cfg }}
{{- end }}

{{/*
The packing level of a webhook config (a dict, its topologies rendered), as
topo-webhook checks it at start (lib/admission/config_packing.c): only
topologies whose lowest level is kubernetes.io/hostname take part (packing
asks which single node fits); a level named must be above the hostname in
one of them; with no level, one of them needs a level above the hostname.
Otherwise the webhook exits 2 on every start, a crash loop an install would
not show until the pods fail; refused here at render time, naming the levels
it could be. Renders nothing.
*/}}
{{- define "topo.webhook.packingLevel" -}}
{{- if and .packing .packing.enabled }}
{{- $could := list }}
{{- range .topologies }}
{{- if eq (last .levels) "kubernetes.io/hostname" }}
{{- range initial .levels }}
{{- $could = append $could . }}
{{- end }}
{{- end }}
{{- end }}
{{- $could = uniq $could }}
{{- $level := .packing.level | default "" }}
{{- $choices := ternary "none (no topology has a level above kubernetes.io/hostname as its lowest)" (join ", " $could) (empty $could) }}
{{- if eq $level "kubernetes.io/hostname" }}
{{- fail (printf "webhook.packing.level: %s is the lowest level of a topology the webhook is given (packing keeps whole the domains above the nodes); it could be one of: %s" $level $choices) }}
{{- else if and $level (not (has $level $could)) }}
{{- fail (printf "webhook.packing.level: no topology the webhook is given has %s above kubernetes.io/hostname as its lowest level (topology.levels, or webhook.config.topologies); it could be one of: %s" $level $choices) }}
{{- else if empty $could }}
{{- fail "webhook.packing.enabled: no topology the webhook is given has a level above kubernetes.io/hostname as its lowest (packing needs the nodes themselves and a level above them); give one such levels (topology.levels, or webhook.config.topologies)" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
webhook.packing.resources, each a resource name (the schema's pattern, again
here: the names are quoted into the matchConditions' CEL expression, which a
quote or a backslash would break, and --skip-schema-validation skips the
schema). Renders nothing.
*/}}
{{- define "topo.webhook.packingResources" -}}
{{- range .Values.webhook.packing.resources }}
{{- if not (regexMatch "^([a-z0-9]([-.a-z0-9]*[a-z0-9])?/)?[A-Za-z0-9]([-._A-Za-z0-9]{0,61}[A-Za-z0-9])?$" (toString .)) }}
{{- fail (printf "webhook.packing.resources: %q is not a resource name (e.g. nvidia.com/gpu)" (toString .)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The webhook's TLS material for provider helm, made once per render: the
existing Secret's when there is one (so upgrades keep the CA the API server
trusts), else a new CA and a serving certificate for the Service's names.
Returned as YAML (ca, crt, key: base64); cached in .Values so that the
Secret and the webhook configuration get the same CA.
*/}}
{{- define "topo.webhook.tls" -}}
{{- if not (hasKey .Values "topoGeneratedTLS") }}
{{- $name := include "topo.webhook.tlsSecretName" . }}
{{- $found := lookup "v1" "Secret" .Release.Namespace $name }}
{{- $tls := dict }}
{{- if and $found $found.data (index $found.data "ca.crt") (index $found.data "tls.crt") (index $found.data "tls.key") }}
{{- $tls = dict "ca" (index $found.data "ca.crt") "crt" (index $found.data "tls.crt") "key" (index $found.data "tls.key") }}
{{- else }}
{{- $svc := include "topo.webhook.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $dns := list (include "topo.webhook.serviceDNSName" .) $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) }}
{{- $days := int .Values.webhook.tls.validityDays }}
{{- $ca := genCA (printf "%s-ca" $svc) $days }}
{{- $cert := genSignedCert (include "topo.webhook.serviceDNSName" .) nil $dns $days $ca }}
{{- $tls = dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) }}
{{- end }}
{{- $_ := set .Values "topoGeneratedTLS" $tls }}
{{- end }}
{{- toYaml (get .Values "topoGeneratedTLS") }}
{{- end }}

{{/* The cert-manager Issuer the serving certificate comes from. */}}
{{- define "topo.webhook.issuerRef" -}}
{{- if .Values.webhook.tls.certManager.issuerRef.name -}}
{{ toYaml .Values.webhook.tls.certManager.issuerRef }}
{{- else -}}
name: {{ printf "%s-ca" (include "topo.webhook.fullname" .) }}
kind: Issuer
group: cert-manager.io
{{- end }}
{{- end }}

{{/* Where topo-sync's Secrets and shared files are mounted. */}}
{{- define "topo.sync.netboxDir" -}}/var/run/secrets/topo/netbox{{- end }}
{{- define "topo.sync.ufmDir" -}}/var/run/secrets/topo/ufm{{- end }}
{{- define "topo.sync.lldpDir" -}}/var/run/topo/lldp{{- end }}
{{- define "topo.sync.configDir" -}}/etc/topo{{- end }}

{{/* The Secret names topo-sync reads credentials from. */}}
{{- define "topo.sync.netboxSecret" -}}
{{- default (printf "%s-netbox" (include "topo.sync.fullname" .)) .Values.sync.netbox.existingSecret }}
{{- end }}

{{- define "topo.sync.ufmSecret" -}}
{{- default (printf "%s-ufm" (include "topo.sync.fullname" .)) .Values.sync.ufm.existingSecret }}
{{- end }}

{{/*
topo-sync's configuration file: sync.config, with labels.prefix and
labels.levels from topology unless given, and sources.netbox, .ufm and
.lldp from sync.netbox, sync.ufm and sync.lldp (the Secrets' files as
tokenFile and passwordFile).
*/}}
{{- define "topo.sync.config" -}}
{{- include "topo.topology.levelsInOrder" . }}
{{- $cfg := deepCopy .Values.sync.config }}
{{- $labels := default dict $cfg.labels }}
{{- if not (hasKey $labels "prefix") }}
{{- $_ := set $labels "prefix" .Values.topology.prefix }}
{{- end }}
{{- if not (hasKey $labels "levels") }}
{{- $_ := set $labels "levels" .Values.topology.levels }}
{{- end }}
{{- $_ := set $cfg "labels" $labels }}
{{- $sources := default dict $cfg.sources }}
{{- $cfgDir := include "topo.sync.configDir" . }}
{{- with .Values.sync.netbox }}
{{- if .url }}
{{- $nb := merge (dict "url" .url "tokenFile" (printf "%s/%s" (include "topo.sync.netboxDir" $) .tokenKey) "tokenScheme" .tokenScheme) (deepCopy .options) }}
{{- if .caBundle }}
{{- $_ := set $nb "caFile" (printf "%s/netbox-ca.pem" $cfgDir) }}
{{- end }}
{{- $_ := set $sources "netbox" $nb }}
{{- end }}
{{- end }}
{{- with .Values.sync.ufm }}
{{- if .url }}
{{- $ufm := merge (dict "url" .url) (deepCopy .options) }}
{{- if eq .auth "token" }}
{{- $_ := set $ufm "tokenFile" (printf "%s/%s" (include "topo.sync.ufmDir" $) .tokenKey) }}
{{- else }}
{{- $_ := set $ufm "username" .username }}
{{- $_ := set $ufm "passwordFile" (printf "%s/%s" (include "topo.sync.ufmDir" $) .passwordKey) }}
{{- end }}
{{- if .caBundle }}
{{- $_ := set $ufm "caFile" (printf "%s/ufm-ca.pem" $cfgDir) }}
{{- end }}
{{- $_ := set $sources "ufm" $ufm }}
{{- end }}
{{- end }}
{{- if .Values.lldp.enabled }}
{{- $_ := set $sources "lldp" (dict "dir" (include "topo.sync.lldpDir" .)) }}
{{- else if .Values.sync.lldp.url }}
{{- $_ := set $sources "lldp" (dict "url" .Values.sync.lldp.url) }}
{{- end }}
{{- if $sources }}
{{- $_ := set $cfg "sources" $sources }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* Whether the chart makes a credentials Secret for NetBox, for UFM. */}}
{{- define "topo.sync.netboxSecretMade" -}}
{{- if and .Values.sync.enabled .Values.sync.netbox.url (not .Values.sync.netbox.existingSecret) }}true{{- end }}
{{- end }}

{{- define "topo.sync.ufmSecretMade" -}}
{{- if and .Values.sync.enabled .Values.sync.ufm.url (not .Values.sync.ufm.existingSecret) }}true{{- end }}
{{- end }}
