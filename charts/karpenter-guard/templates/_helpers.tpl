{{/* The chart's name: the app.kubernetes.io/name label every selector matches. */}}
{{- define "karpenter-guard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: the release's name when it holds the chart's (karpenter-guard by default), else
release-chart. Certificates, the Secret and the webhook configurations are named after it.
*/}}
{{- define "karpenter-guard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "karpenter-guard.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The service account's name: serviceAccount.name, else the full name. When the chart does not create
it (serviceAccount.create false), it must be named: the RBAC is bound to it.
*/}}
{{- define "karpenter-guard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "karpenter-guard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.create is false: set serviceAccount.name to your ServiceAccount in the release's namespace (the one your IRSA role or Pod Identity association names); the chart binds its RBAC to it" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* What every selector matches: the chart's name and the release, so that two releases in one
namespace never select each other's pods. manifests/ selects the same (release karpenter-guard), so
that a Deployment applied with kustomize can be taken over by a release of that name (a selector
cannot change). */}}
{{- define "karpenter-guard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karpenter-guard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Every object's labels: the selector's, Helm's own and commonLabels (the chart's win). */}}
{{- define "karpenter-guard.labels" -}}
{{- $own := dict "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-")
  "app.kubernetes.io/version" (toString .Chart.AppVersion) "app.kubernetes.io/managed-by" .Release.Service }}
{{- toYaml (merge (include "karpenter-guard.selectorLabels" . | fromYaml) $own (deepCopy (.Values.commonLabels | default dict))) }}
{{- end }}

{{/* The pods' labels: the selector's, then podLabels, then commonLabels. */}}
{{- define "karpenter-guard.podLabels" -}}
{{- toYaml (merge (include "karpenter-guard.selectorLabels" . | fromYaml) (deepCopy (.Values.podLabels | default dict)) (deepCopy (.Values.commonLabels | default dict))) }}
{{- end }}

{{/* The image: repository@digest when a digest pins it, else repository:tag (the appVersion by default). */}}
{{- define "karpenter-guard.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
The PodDisruptionBudget's minAvailable, or "" when the chart renders none: with fewer than two
replicas a budget could only forbid evicting the one pod, and a drain (Karpenter's consolidation and
drift included) would wait on its node forever. A minAvailable that leaves no replica evictable fails
the rendering for the same reason.
*/}}
{{- define "karpenter-guard.pdbMinAvailable" -}}
{{- $replicas := int .Values.replicas }}
{{- $min := .Values.podDisruptionBudget.minAvailable }}
{{- if and .Values.podDisruptionBudget.enabled (ge $replicas 2) }}
{{- $needed := 0 }}
{{- if kindIs "string" $min }}
{{- if not (regexMatch "^[0-9]+%$" $min) }}
{{- fail (printf "podDisruptionBudget.minAvailable %q: want a number of replicas or a percentage such as 50%%" $min) }}
{{- end }}
{{- $needed = div (add (mul $replicas (trimSuffix "%" $min | atoi)) 99) 100 }}
{{- else }}
{{- $needed = int $min }}
{{- end }}
{{- if ge $needed $replicas }}
{{- fail (printf "podDisruptionBudget.minAvailable %v keeps all %d replicas: no pod of karpenter-guard could ever be evicted, and draining its nodes (Karpenter's consolidation and drift included) would wait forever. Set it below replicas (1 with 2 replicas), or raise replicas" $min $replicas) }}
{{- end }}
{{- $min }}
{{- end }}
{{- end }}

{{/* The cluster's name, required: without it nothing can be looked up in AWS. */}}
{{- define "karpenter-guard.clusterName" -}}
{{- required "clusterName is required: the EKS cluster's name (--set clusterName=my-cluster), by which karpenter-guard looks its subnets, security groups, access entries and AMIs up in AWS" .Values.clusterName }}
{{- end }}

{{/* The validating webhook of Karpenter's kinds fails closed in mode enforce only (docs/rollout.md). */}}
{{- define "karpenter-guard.karpenterFailurePolicy" -}}
{{- if eq .Values.mode "enforce" }}Fail{{ else }}Ignore{{ end }}
{{- end }}

{{/*
GOMEMLIMIT: goMemLimit, or 2/3 of resources.limits.memory when it is in Mi or Gi (384Mi gives 256MiB): the
rest holds what is not Go heap, about 100 MiB at the peak of an audit (BENCHMARKS.md).
*/}}
{{- define "karpenter-guard.goMemLimit" -}}
{{- if .Values.goMemLimit }}
{{- .Values.goMemLimit }}
{{- else }}
{{- $limit := toString (dig "limits" "memory" "" (.Values.resources | default dict)) }}
{{- $mi := 0 }}
{{- if hasSuffix "Gi" $limit }}
{{- $mi = mul (trimSuffix "Gi" $limit | atoi) 1024 }}
{{- else if hasSuffix "Mi" $limit }}
{{- $mi = trimSuffix "Mi" $limit | atoi }}
{{- end }}
{{- if le (int $mi) 0 }}
{{- fail (printf "goMemLimit is empty and resources.limits.memory (%q) is not a whole number of Mi or Gi: set goMemLimit (about 2/3 of the memory limit, e.g. 256MiB for 384Mi)" $limit) }}
{{- end }}
{{- printf "%dMiB" (div (mul $mi 2) 3) }}
{{- end }}
{{- end }}

{{/*
The matchConditions both Karpenter webhooks carry (a test keeps them equal). See webhooks.yaml.
*/}}
{{- define "karpenter-guard.karpenterMatchConditions" -}}
- name: not-karpenter-controller
  expression: >-
    !(request.userInfo.username in [{{ range $i, $sa := .Values.karpenterServiceAccounts }}{{ if $i }}, {{ end }}'system:serviceaccount:{{ $sa | replace "/" ":" }}'{{ end }}])
- name: not-being-deleted
  expression: "object == null || !has(object.metadata.deletionTimestamp)"
- name: spec-or-checked-annotation-changed
  expression: >-
    request.operation != 'UPDATE' ||
    has(object.spec) != has(oldObject.spec) || (has(object.spec) && object.spec != oldObject.spec) ||
    [object, oldObject].exists(o, has(o.metadata.annotations) && o.metadata.annotations != null && o.metadata.annotations.exists(k,
    (k.startsWith('karpenter-guard.io/') || k.startsWith('compatibility.karpenter.sh/') || k.startsWith('compatibility.karpenter.k8s.aws/')) &&
    !(has(object.metadata.annotations) && object.metadata.annotations != null && k in object.metadata.annotations &&
    has(oldObject.metadata.annotations) && oldObject.metadata.annotations != null && k in oldObject.metadata.annotations &&
    object.metadata.annotations[k] == oldObject.metadata.annotations[k])))
{{- end }}

{{/* The clientConfig of every webhook: the release's Service, at path. */}}
{{- define "karpenter-guard.clientConfig" -}}
clientConfig:
  service:
    name: {{ include "karpenter-guard.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- end }}

{{/* cert-manager's CA injection into a webhook configuration. */}}
{{- define "karpenter-guard.certManagerAnnotations" -}}
{{- if eq .Values.certificates.mode "cert-manager" -}}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "karpenter-guard.fullname" . }}-serving
{{- end }}
{{- end }}
