{{- define "pmapi.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "pmapi.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "pmapi.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Environment shared by every pmapi container. */}}
{{- define "pmapi.env" -}}
- name: PMAPI_ADDR
  value: ":8080"
- name: PMAPI_METRICS_ADDR
  value: ":9090"
- name: PMAPI_LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
- name: PMAPI_TENANT_SETTING
  value: {{ .Values.config.tenantSetting | quote }}
- name: PMAPI_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.config.rateLimitPerMinute | quote }}
- name: PMAPI_SHUTDOWN_GRACE
  value: {{ .Values.config.shutdownGrace | quote }}
{{- with .Values.config.webhookCAFile }}
- name: PMAPI_WEBHOOK_CA_FILE
  value: {{ . | quote }}
{{- end }}
{{- range $key := list "PMAPI_DATABASE_URL" "PMAPI_ADMIN_TOKEN" "PMAPI_SECRET_KEY" }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef: {name: {{ $.Values.existingSecret }}, key: {{ $key }}}
{{- end }}
{{- if .Values.config.shardsFromSecret }}
- name: PMAPI_SHARDS
  valueFrom:
    secretKeyRef: {name: {{ .Values.existingSecret }}, key: PMAPI_SHARDS}
{{- end }}
{{- end -}}

{{- define "pmapi.podSpecCommon" -}}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.extraVolumes }}
volumes: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
