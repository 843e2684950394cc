{{- define "pmapi.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-<name>, or the release name alone when it already contains the
name (release "pmapi" gives pmapi-api, not pmapi-pmapi-api). */}}
{{- define "pmapi.fullname" -}}
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

{{- define "pmapi.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pmapi.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "pmapi.labels" -}}
{{ include "pmapi.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "pmapi.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The base URL clients reach the API under: config.publicURL, else the
first ingress host. */}}
{{- define "pmapi.publicURL" -}}
{{- if .Values.config.publicURL -}}
{{- .Values.config.publicURL | trimSuffix "/" -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- $host := (first .Values.ingress.hosts).host -}}
{{- printf "%s://%s" (ternary "https" "http" (gt (len .Values.ingress.tls) 0)) $host -}}
{{- end -}}
{{- end -}}

{{- define "pmapi.secretEnv" -}}
- name: {{ .key }}
  valueFrom:
    secretKeyRef: {name: {{ .secret }}, key: {{ .key }}}
{{- end -}}

{{/* Where the pods reach Citus nodes (API, workers, migration Job). */}}
{{- define "pmapi.citusNodes" -}}
{{- with .Values.config.citusNodes }}
- name: PMAPI_CITUS_NODES
  value: {{ join "," . | quote }}
{{- end }}
{{- end -}}

{{/* Environment of every long-running pmapi container (API and workers). */}}
{{- define "pmapi.env" -}}
- name: PMAPI_METRICS_ADDR
  value: ":9090"
- name: PMAPI_LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
- name: PMAPI_TENANT_SETTING
  value: {{ .Values.config.tenantSetting | quote }}
- name: PMAPI_CITUS_ROUTING
  value: {{ .Values.config.citusRouting | quote }}
- name: PMAPI_CITUS_PLAN_CACHE
  value: {{ .Values.config.citusPlanCache | quote }}
{{- include "pmapi.citusNodes" . }}
- name: PMAPI_SHUTDOWN_GRACE
  value: {{ .Values.config.shutdownGrace | quote }}
- name: PMAPI_USAGE_FLUSH
  value: {{ .Values.config.usageFlush | quote }}
- name: PMAPI_PUBLIC_URL
  value: {{ include "pmapi.publicURL" . | quote }}
{{- with .Values.config.webhookCAFile }}
- name: PMAPI_WEBHOOK_CA_FILE
  value: {{ . | quote }}
{{- end }}
{{- with .Values.config.webhookRetrySchedule }}
- name: PMAPI_WEBHOOK_RETRY_SCHEDULE
  value: {{ . | quote }}
{{- end }}
- name: PMAPI_EVENT_RETENTION
  value: {{ include "pmapi.eventRetention" . | quote }}
{{- range $key := list "PMAPI_DATABASE_URL" "PMAPI_SECRET_KEY" }}
{{ include "pmapi.secretEnv" (dict "key" $key "secret" $.Values.existingSecret) }}
{{- end }}
{{- if .Values.config.shardsFromSecret }}
{{ include "pmapi.secretEnv" (dict "key" "PMAPI_SHARDS" "secret" .Values.existingSecret) }}
{{- end }}
{{- if .Values.secretKeyPrevious }}
{{ include "pmapi.secretEnv" (dict "key" "PMAPI_SECRET_KEY_PREVIOUS" "secret" .Values.existingSecret) }}
{{- end }}
{{- end -}}

{{/* Environment only the API uses. */}}
{{- define "pmapi.apiEnv" -}}
- name: PMAPI_ADDR
  value: ":8080"
- name: PMAPI_RATE_LIMIT_PER_MINUTE
  value: {{ .Values.config.rateLimitPerMinute | quote }}
- name: PMAPI_REPLICA_HEARTBEAT
  value: {{ .Values.config.replicaHeartbeat | quote }}
{{- with (.Values.config.oauthIssuer | default (include "pmapi.publicURL" .)) }}
- name: PMAPI_OAUTH_ISSUER
  value: {{ . | quote }}
{{- end }}
- name: PMAPI_OAUTH_ACCESS_TTL
  value: {{ .Values.config.oauthAccessTTL | quote }}
- name: PMAPI_TRUSTED_PROXIES
  value: {{ join "," .Values.config.trustedProxies | quote }}
{{ include "pmapi.secretEnv" (dict "key" "PMAPI_ADMIN_TOKEN" "secret" .Values.existingSecret) }}
{{- if .Values.oidc.enabled }}
{{- if not (include "pmapi.publicURL" .) }}
{{- fail "oidc.enabled needs config.publicURL or an ingress host: the provider sends people back to <public URL>/console/callback" }}
{{- end }}
- name: PMAPI_OIDC_ISSUER
  value: {{ required "oidc.enabled needs oidc.issuer (PMAPI_OIDC_ISSUER)" .Values.oidc.issuer | quote }}
- name: PMAPI_OIDC_CLIENT_ID
  value: {{ required "oidc.enabled needs oidc.clientID (PMAPI_OIDC_CLIENT_ID)" .Values.oidc.clientID | quote }}
{{ include "pmapi.secretEnv" (dict "key" "PMAPI_OIDC_CLIENT_SECRET" "secret" .Values.existingSecret) }}
{{- end }}
{{- if .Values.api.placementVerbs }}
{{ include "pmapi.secretEnv" (dict "key" "PMAPI_MIGRATE_DATABASE_URL" "secret" .Values.existingSecret) }}
{{- if .Values.config.shardsFromSecret }}
{{ include "pmapi.secretEnv" (dict "key" "PMAPI_MIGRATE_SHARDS" "secret" .Values.existingSecret) }}
{{- end }}
{{- end }}
{{- end -}}

{{/* extraEnv and extraEnvFrom, last so they can override the chart's. */}}
{{- define "pmapi.extraEnv" -}}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "pmapi.envFrom" -}}
{{- with .Values.extraEnvFrom }}
envFrom: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* topologySpreadConstraints for the pods of one component. */}}
{{- define "pmapi.topologySpread" -}}
{{- $ctx := .ctx -}}
{{- if $ctx.Values.topologySpreadConstraints -}}
topologySpreadConstraints: {{- toYaml $ctx.Values.topologySpreadConstraints | nindent 2 }}
{{- else if $ctx.Values.topologySpread.enabled -}}
topologySpreadConstraints:
{{- range $ctx.Values.topologySpread.topologyKeys }}
  - maxSkew: {{ $ctx.Values.topologySpread.maxSkew }}
    topologyKey: {{ . }}
    whenUnsatisfiable: {{ $ctx.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels: {{- include "pmapi.selectorLabels" $ctx | nindent 8 }}
        app.kubernetes.io/component: {{ $.component }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "pmapi.podSpecCommon" -}}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
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

{{/* config.eventRetention, refused below a day as pmapi refuses it at start. */}}
{{- define "pmapi.eventRetention" -}}
{{- $r := toString .Values.config.eventRetention -}}
{{- if or (not (regexMatch "^[0-9]+h$" $r)) (lt (atoi (trimSuffix "h" $r)) 24) -}}
{{- fail (printf "config.eventRetention must be whole hours of at least 24h, such as 720h, not %q" $r) -}}
{{- end -}}
{{- $r -}}
{{- end -}}
