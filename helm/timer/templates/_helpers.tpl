{{- define "timer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "timer.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "timer.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "timer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one role; call with (dict "root" $ "role" "api"). */}}
{{- define "timer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "timer.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "timer.secretName" -}}
{{- default (include "timer.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{- define "timer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "timer.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "timer.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The name of the hook copies of the ConfigMap, Secret and ServiceAccount the migration Job uses. */}}
{{- define "timer.migrateName" -}}
{{- printf "%s-migrate" (include "timer.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The ServiceAccount of the migration Job: its hook copy, or the one named when the chart creates none. */}}
{{- define "timer.migrateServiceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- include "timer.migrateName" . -}}
{{- else -}}
{{- include "timer.serviceAccountName" . -}}
{{- end -}}
{{- end -}}

{{/*
Annotations of a pre-install/pre-upgrade hook object; call with (dict "root" $ "weight" -10). Helm
runs the hooks of one event in ascending weight, so the migration Job (weight 0) finds its ConfigMap,
Secret, ServiceAccount and NetworkPolicy (-10) created. Each is deleted after the event succeeded and
before it is created again, so no object is left per revision. With the quickstart the first
migration runs post-install instead: its MariaDB is an object of the release, which Helm creates only
after the pre-install hooks (the roles retry until the schema is there).
*/}}
{{- define "timer.hookAnnotations" -}}
helm.sh/hook: {{ if .root.Values.quickstart.enabled }}post-install,pre-upgrade{{ else }}pre-install,pre-upgrade{{ end }}
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/* The ConfigMap's data, shared by the release's ConfigMap and the migration hook's copy. */}}
{{- define "timer.configData" -}}
TIMER_PULSAR_URL: {{ include "timer.pulsarUrl" . | quote }}
TIMER_PULSAR_TENANT: {{ .Values.pulsar.tenant | quote }}
TIMER_PULSAR_NAMESPACE: {{ .Values.pulsar.namespace | quote }}
{{- if not (hasKey .Values.config "TIMER_SLICE_BUCKETS_MAX") }}
TIMER_SLICE_BUCKETS_MAX: {{ include "timer.sliceBucketsMax" . | quote }}
{{- end }}
{{- range $k, $v := .Values.config }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end -}}

{{/*
The most buckets a minute may get (docs/scaling.md, "Buckets per minute"), from the triggers the
release always runs: a third of the slots of the minimum replicas less one. The migrator records a
minute's count up to three windows ahead, longer than an autoscaler waits before it scales in, so the
live triggers alone could have left more slices than slots.
*/}}
{{- define "timer.sliceBucketsMax" -}}
{{- $t := .Values.roles.trigger -}}
{{- $floor := $t.replicas -}}
{{- if $t.keda.enabled }}{{ $floor = $t.keda.minReplicas }}{{ else if $t.autoscaling.enabled }}{{ $floor = $t.autoscaling.minReplicas }}{{ end -}}
{{- $slots := int (coalesce (get $t.env "TIMER_TRIGGER_CONCURRENCY") (get .Values.config "TIMER_TRIGGER_CONCURRENCY") 32) -}}
{{- $default := int (coalesce (get .Values.config "TIMER_SLICE_BUCKETS") 10) -}}
{{- max $default (div (mul (sub (int $floor) 1) $slots) 3) -}}
{{- end -}}

{{/* The Secret's stringData, shared by the release's Secret and the migration hook's copy. */}}
{{- define "timer.secretData" -}}
TIMER_MYSQL_URL: {{ include "timer.mysqlUrl" . | quote }}
TIMER_REDIS_URL: {{ include "timer.redisUrl" . | quote }}
{{- with .Values.pulsar.token }}
TIMER_PULSAR_TOKEN: {{ . | quote }}
{{- end }}
{{- with .Values.adminToken }}
TIMER_ADMIN_TOKEN: {{ . | quote }}
{{- end }}
{{- with .Values.secretsKey }}
TIMER_SECRETS_KEY: {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The container environment every role and the migration job share (inside a container spec); call
with (dict "root" $ "extra" $roleEnv "configMap" $name "secret" $name).
*/}}
{{- define "timer.containerEnv" -}}
env:
  - name: TIMER_HTTP_HOST
    value: "0.0.0.0"
  - name: TIMER_HTTP_PORT
    value: "8080"
  {{- range $k, $v := .extra }}
  - name: {{ $k }}
    value: {{ $v | quote }}
  {{- end }}
  {{- with .root.Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
envFrom:
  - configMapRef:
      name: {{ .configMap }}
  - secretRef:
      name: {{ .secret }}
  {{- with .root.Values.extraEnvFrom }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- with .root.Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* The pod volumes matching timer.containerEnv's mounts (inside a pod spec). */}}
{{- define "timer.podVolumes" -}}
volumes:
  - name: tmp
    emptyDir: {}
  {{- with .Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/*
Seconds a role may take to drain after SIGTERM: its TIMER_SHUTDOWN_TIMEOUT_MS (role env, then
config), 25 s by default, rounded up. Call with (dict "root" $ "spec" $roleSpec).
*/}}
{{- define "timer.drainSeconds" -}}
{{- $ms := 25000 -}}
{{- with .root.Values.config.TIMER_SHUTDOWN_TIMEOUT_MS }}{{ $ms = int . }}{{ end -}}
{{- with .spec.env.TIMER_SHUTDOWN_TIMEOUT_MS }}{{ $ms = int . }}{{ end -}}
{{- div (add $ms 999) 1000 -}}
{{- end -}}

{{/*
NetworkPolicy egress rules to dependencies; call with (dict "np" .Values.networkPolicy "deps" (list
"dns" "mysql")). A dependency with an empty `to` is allowed on its ports to any address.
*/}}
{{- define "timer.dependencyEgress" -}}
{{- range .deps }}
{{- $dep := get $.np . }}
- ports:
    {{- toYaml $dep.ports | nindent 4 }}
  {{- with $dep.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}

{{/*
Whether the cluster serves an API (a CRD's "group/version/Kind"): objects of custom resources are
rendered only then, so an install on a cluster without KEDA, the Prometheus Operator or Gateway API
does not fail. `helm template` needs `--api-versions` for them.
*/}}
{{- define "timer.hasApi" -}}
{{- if .root.Capabilities.APIVersions.Has .api }}true{{ end -}}
{{- end -}}

{{/* Whether KEDA scales a role (enabled and its CRD served); call with (dict "root" $ "spec" $roleSpec). */}}
{{- define "timer.kedaScales" -}}
{{- if and .spec.keda .spec.keda.enabled (include "timer.hasApi" (dict "root" .root "api" "keda.sh/v1alpha1/ScaledObject")) }}true{{ end -}}
{{- end -}}

{{/* Names of the quickstart's servers; call with (dict "root" $ "name" "mariadb"). */}}
{{- define "timer.quickstartName" -}}
{{- printf "%s-%s" (include "timer.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The dependency URLs: the quickstart's servers when it is enabled, else the values. */}}
{{- define "timer.mysqlUrl" -}}
{{- if .Values.quickstart.enabled -}}
{{- $m := .Values.quickstart.mariadb -}}
{{- printf "mysql://%s:%s@%s:3306/%s" $m.user $m.password (include "timer.quickstartName" (dict "root" . "name" "mariadb")) $m.database -}}
{{- else -}}
{{- required "mysql.url is required (or set existingSecret)" .Values.mysql.url -}}
{{- end -}}
{{- end -}}

{{- define "timer.redisUrl" -}}
{{- if .Values.quickstart.enabled -}}
{{- printf "redis://%s:6379/0" (include "timer.quickstartName" (dict "root" . "name" "redis")) -}}
{{- else -}}
{{- required "redis.url is required (or set existingSecret)" .Values.redis.url -}}
{{- end -}}
{{- end -}}

{{- define "timer.pulsarUrl" -}}
{{- if .Values.quickstart.enabled -}}
{{- printf "http://%s:8080" (include "timer.quickstartName" (dict "root" . "name" "pulsar")) -}}
{{- else -}}
{{- .Values.pulsar.url -}}
{{- end -}}
{{- end -}}
