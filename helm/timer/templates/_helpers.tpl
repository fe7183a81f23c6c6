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

{{/* The container environment every role and the migration job share (inside a container spec). */}}
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
envFrom:
  - configMapRef:
      name: {{ include "timer.fullname" .root }}
  - secretRef:
      name: {{ include "timer.secretName" .root }}
{{- end -}}
