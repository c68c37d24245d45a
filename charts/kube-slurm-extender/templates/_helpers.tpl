{{/*
The chart renders the manifests of manifests/base (files/base, a link to them) and of
manifests/overlays/monitoring (files/monitoring): one source for both install paths. Values change
only what they name; HelmE2E checks that the defaults give kustomize's objects exactly.
*/}}

{{/* The labels kustomize gives every object of manifests/base, and Helm's own two. */}}
{{- define "kse.labels" -}}
app.kubernetes.io/name: kube-slurm-extender
app.kubernetes.io/part-of: kube-slurm-extender
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
One object (a dict) as a YAML document: the chart's labels added, the manifests' namespace
(kube-slurm-extender) replaced by the release's where it is named (kube-system stays), and the
monitoring objects given monitoring.labels (the selector of the Prometheus that should load them).
*/}}
{{- define "kse.object" -}}
{{- $root := index . 0 -}}
{{- $o := index . 1 -}}
{{- $meta := $o.metadata -}}
{{- $labels := merge (fromYaml (include "kse.labels" $root)) (default dict $meta.labels) -}}
{{- if has $o.kind (list "ServiceMonitor" "PrometheusRule") -}}
{{- $labels = merge $labels $root.Values.monitoring.labels -}}
{{- end -}}
{{- $_ := set $meta "labels" $labels -}}
{{- if eq (default "" $meta.namespace) "kube-slurm-extender" -}}
{{- $_ := set $meta "namespace" $root.Release.Namespace -}}
{{- end -}}
{{- range (default list $o.subjects) -}}
{{- if eq (default "" .namespace) "kube-slurm-extender" -}}
{{- $_ := set . "namespace" $root.Release.Namespace -}}
{{- end -}}
{{- end }}
---
{{ toYaml $o }}
{{ end -}}

{{/* Every object of one manifest file under the chart's files/. */}}
{{- define "kse.file" -}}
{{- $root := index . 0 -}}
{{- $file := index . 1 -}}
{{- $text := $root.Files.Get $file -}}
{{- if not $text -}}
{{- fail (printf "the chart has no %s (files/ links to manifests/: package the chart from the repository)" $file) -}}
{{- end -}}
{{- range $doc := regexSplit "(?m)^---[ \\t]*$" $text -1 -}}
{{- $o := fromYaml $doc -}}
{{- if $o.Error -}}
{{- fail (printf "%s: %s" $file $o.Error) -}}
{{- end -}}
{{- if $o.kind -}}
{{ include "kse.object" (list $root $o) }}
{{- end -}}
{{- end -}}
{{- end }}

{{/* kube-scheduler's configuration: manifests/base's, with the Lease namespace and verbs TLS. */}}
{{- define "kse.schedulerConfig" -}}
{{- $c := .Files.Get "files/base/scheduler-config.yaml" -}}
{{- $c = replace "resourceNamespace: kube-slurm-extender" (printf "resourceNamespace: %s" .Release.Namespace) $c -}}
{{- if .Values.verbsTls.secret -}}
{{- $plain := "urlPrefix: \"http://127.0.0.1:8888\"" -}}
{{- if not (contains $plain $c) -}}
{{- fail "verbsTls: scheduler-config.yaml no longer has the extender's urlPrefix this chart rewrites" -}}
{{- end -}}
{{- $c = replace $plain "urlPrefix: \"https://127.0.0.1:8888\"\n    enableHTTPS: true\n    tlsConfig: {caFile: /etc/kse/tls/ca.crt, certFile: /etc/kse/tls/client.crt, keyFile: /etc/kse/tls/client.key}" $c -}}
{{- end -}}
{{- $c -}}
{{- end }}

{{/*
kube-scheduler's image: the tag given, else the cluster's own version (kube-scheduler must not be
newer than the API server, nor more than one minor older). A vendor's suffix (v1.36.3-eks-…,
v1.36.3+k3s1) is not part of the upstream image's tag.
*/}}
{{- define "kse.schedulerImage" -}}
{{- $tag := .Values.scheduler.image.tag -}}
{{- if not $tag -}}
{{- $v := .Capabilities.KubeVersion.Version -}}
{{- $tag = regexFind "^v[0-9]+[.][0-9]+[.][0-9]+" $v -}}
{{- if not $tag -}}
{{- fail (printf "scheduler.image.tag: cannot tell the cluster's version from %q; set it (e.g. v1.36.3)" $v) -}}
{{- end -}}
{{- end -}}
{{- printf "%s:%s" .Values.scheduler.image.repository $tag -}}
{{- end }}

{{/* The extender's image: image.tag, else the chart's appVersion. */}}
{{- define "kse.extenderImage" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end }}
