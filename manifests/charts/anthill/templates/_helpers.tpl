{{- /* Labels of every object the chart renders (the CRDs in crds/ aside,
which Helm does not template). The selector labels (name and component)
stay as manifests/default has them: a Deployment's selector cannot
change on upgrade. */ -}}
{{- define "anthill.labels" -}}
app.kubernetes.io/name: anthill
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: anthill
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
{{- end }}

{{- /* The labels of the operator's own objects: anthill.labels and its
component. */ -}}
{{- define "anthill.operatorLabels" -}}
{{ include "anthill.labels" . }}
app.kubernetes.io/component: operator
{{- end }}

{{- /* The operator image: image.repository, and image.tag or else the
chart's appVersion. */ -}}
{{- define "anthill.image" -}}
{{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- /* withLabels renders the YAML documents of a file of files/ (copies of
manifests/rbac) with anthill.labels added to each one's own, and a
namespaced one (a Role in the operator's namespace) in the release
namespace. */ -}}
{{- define "anthill.withLabels" -}}
{{- $root := index . 0 -}}
{{- $labels := include "anthill.labels" $root | fromYaml -}}
{{- range $i, $doc := regexSplit "(?m)^---\\s*$" ($root.Files.Get (index . 1)) -1 }}
{{- $o := fromYaml $doc }}
{{- if $o }}
{{- $_ := set $o.metadata "labels" (merge (dict) ($o.metadata.labels | default dict) $labels) }}
{{- if $o.metadata.namespace }}
{{- $_ := set $o.metadata "namespace" $root.Release.Namespace }}
{{- end }}
---
{{ toYaml $o }}
{{- end }}
{{- end }}
{{- end }}

{{- /* The namespace of the ServiceMonitor and PrometheusRule. */ -}}
{{- define "anthill.monitoringNamespace" -}}
{{ .Values.monitoring.namespace | default .Release.Namespace }}
{{- end }}
