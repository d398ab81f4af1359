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

{{/* The service account's name: the full name. */}}
{{- define "karpenter-guard.serviceAccountName" -}}
{{- include "karpenter-guard.fullname" . }}
{{- end }}

{{/* What every selector matches: the name only, as manifests/ selects, so that a Deployment applied
with kustomize can be taken over by a release (a selector cannot change). */}}
{{- define "karpenter-guard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karpenter-guard.name" . }}
{{- end }}

{{/* Every object's labels: the selector's, and Helm's own. */}}
{{- define "karpenter-guard.labels" -}}
{{ include "karpenter-guard.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
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
GOMEMLIMIT: goMemLimit, or 4/5 of resources.limits.memory when it is in Mi or Gi (320Mi gives 256MiB).
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
{{- fail (printf "goMemLimit is empty and resources.limits.memory (%q) is not a whole number of Mi or Gi: set goMemLimit (about 4/5 of the memory limit, e.g. 256MiB for 320Mi)" $limit) }}
{{- end }}
{{- printf "%dMiB" (div (mul $mi 4) 5) }}
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
