#!/usr/bin/env bash
# Lint the chart, render it with every option combination below and check what
# each must (and must not) produce, check the alert rules and run their unit
# tests. helm and promtool come from PATH or .tools/bin (charts/tools.sh puts
# them there). The dashboard and the runbook links are checked by the Go tests
# in charts/ (make test).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PATH"
bash charts/tools.sh

chart=charts/pmapi
fail() { echo "chart-check: $*" >&2; exit 1; }
# has TEXT PATTERN WHY / lacks TEXT PATTERN WHY (grep -E)
has() { grep -qE -- "$2" <<<"$1" || fail "$3"; }
lacks() { ! grep -qE -- "$2" <<<"$1" || fail "$3"; }
count() { grep -cE -- "$2" <<<"$1" || true; }
# doc KIND NAME: one document of a rendering on stdin.
doc() { awk -v want="kind: $1\n" -v name="  name: $2\n" 'BEGIN { RS = "\n---\n" } index($0 "\n", want) && index($0 "\n", name) { print }'; }

all_on=(--set serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true,ingress.enabled=true
  --set 'ingress.tls[0].secretName=pmapi-tls,ingress.tls[0].hosts[0]=api.example.com'
  --set 'config.trustedProxies={10.0.0.0/8,192.168.0.0/16}',config.webhookRetrySchedule=10s\\,1m
  --set-json 'extraEnv=[{"name":"PMAPI_JOB_RESCUE_AFTER","value":"30m"}]'
  --set-json 'extraEnvFrom=[{"secretRef":{"name":"pmapi-extra"}}]')

helm lint --strict "$chart" >/dev/null
helm lint --strict "$chart" "${all_on[@]}" >/dev/null

# Defaults, release "pmapi": names without a doubled prefix; the admin token
# and job workers only where used; probes, spread, PDBs, Job deadline.
out=$(helm template pmapi "$chart")
lacks "$out" 'pmapi-pmapi' "release pmapi renders doubled names"
for n in pmapi-api pmapi-worker pmapi-api-metrics pmapi-worker-metrics; do
  has "$out" "^  name: $n\$" "release pmapi lacks $n"
done
api=$(doc Deployment pmapi-api <<<"$out"); worker=$(doc Deployment pmapi-worker <<<"$out")
[ -n "$api" ] && [ -n "$worker" ] || fail "no API or worker Deployment"
has "$api" 'key: PMAPI_ADMIN_TOKEN' "the API lacks PMAPI_ADMIN_TOKEN"
lacks "$worker" 'name: PMAPI_ADMIN_TOKEN' "workers get PMAPI_ADMIN_TOKEN"
has "$worker" 'name: PMAPI_JOB_WORKERS' "workers lack PMAPI_JOB_WORKERS"
has "$api" 'name: PMAPI_TRUSTED_PROXIES' "the API lacks PMAPI_TRUSTED_PROXIES"
has "$(grep -A1 'name: PMAPI_TRUSTED_PROXIES' <<<"$api")" 'value: ""' "PMAPI_TRUSTED_PROXIES is not empty by default"
lacks "$api" 'PMAPI_OAUTH_ISSUER' "an issuer is set without a public URL or issuer value"
for d in "$api" "$worker"; do
  has "$d" 'startupProbe:' "a Deployment lacks its startupProbe"
  [ "$(count "$d" 'topologyKey:')" = 2 ] || fail "a Deployment lacks its zone and node spread"
  has "$d" 'name: PMAPI_PUBLIC_URL' "a Deployment lacks PMAPI_PUBLIC_URL"
done
svc=$(doc Service pmapi <<<"$out")
lacks "$svc" '9090' "the API Service exposes the metrics/pprof port by default"
has "$(doc PodDisruptionBudget pmapi-worker <<<"$out")" 'maxUnavailable: 1' "no worker PodDisruptionBudget"
has "$(doc PodDisruptionBudget pmapi-api <<<"$out")" 'minAvailable: 1' "no API PodDisruptionBudget"
job=$(doc Job pmapi-migrate <<<"$out")
has "$job" 'activeDeadlineSeconds: 600' "the migration Job has no deadline"
has "$job" 'backoffLimit: 3' "the migration Job has no backoffLimit"
lacks "$job" 'name: (PMAPI_ADMIN_TOKEN|PMAPI_SECRET_KEY)' "the migration Job gets secrets it does not use"
lacks "$out" '^kind: (Ingress|ServiceMonitor|PrometheusRule|ConfigMap)$' "an optional object renders by default"
lacks "$out" 'PMAPI_SECRET_KEY_PREVIOUS' "PMAPI_SECRET_KEY_PREVIOUS renders without secretKeyPrevious"
lacks "$out" 'PMAPI_OIDC_' "console sign-in renders while oidc is off"

# Console sign-in: the API pods get the provider, the secret from
# existingSecret; workers and the Job get none of it; half a configuration, or
# one without a public URL, does not render.
oidc=(--set oidc.enabled=true,oidc.issuer=https://accounts.google.com,oidc.clientID=1234.apps.googleusercontent.com
  --set config.publicURL=https://api.example.com)
out=$(helm template pmapi "$chart" "${oidc[@]}")
api=$(doc Deployment pmapi-api <<<"$out")
has "$api" 'value: "https://accounts.google.com"' "the API lacks PMAPI_OIDC_ISSUER"
has "$api" 'value: "1234.apps.googleusercontent.com"' "the API lacks PMAPI_OIDC_CLIENT_ID"
has "$api" 'key: PMAPI_OIDC_CLIENT_SECRET' "the API lacks PMAPI_OIDC_CLIENT_SECRET from the secret"
lacks "$(doc Deployment pmapi-worker <<<"$out")" 'PMAPI_OIDC_' "workers get the console's sign-in"
helm template pmapi "$chart" --set oidc.enabled=true,oidc.clientID=x --set config.publicURL=https://a.example >/dev/null 2>&1 &&
  fail "oidc without an issuer renders"
helm template pmapi "$chart" --set oidc.enabled=true,oidc.issuer=https://i.example,oidc.clientID=x >/dev/null 2>&1 &&
  fail "oidc without a public URL renders"

# A key rotation: the previous key from the same Secret, for API and workers
# (both open sealed values), never for the migration Job.
out=$(helm template pmapi "$chart" --set secretKeyPrevious=true)
for d in "$(doc Deployment pmapi-api <<<"$out")" "$(doc Deployment pmapi-worker <<<"$out")"; do
  has "$(grep -A3 'name: PMAPI_SECRET_KEY_PREVIOUS' <<<"$d")" 'secretKeyRef: \{name: pmapi, key: PMAPI_SECRET_KEY_PREVIOUS\}' "secretKeyPrevious does not read PMAPI_SECRET_KEY_PREVIOUS from the Secret"
done
lacks "$(doc Job pmapi-migrate <<<"$out")" 'PMAPI_SECRET_KEY' "the migration Job gets a secret key"

# Other release names.
out=$(helm template demo "$chart")
has "$out" '^  name: demo-pmapi-api$' "release demo: no demo-pmapi-api"
out=$(helm template demo "$chart" --set fullnameOverride=projects)
has "$out" '^  name: projects-worker$' "fullnameOverride is not used"

# Everything on.
out=$(helm template pmapi "$chart" "${all_on[@]}")
for kind in Deployment Service Job ServiceMonitor PrometheusRule ConfigMap PodDisruptionBudget HorizontalPodAutoscaler Ingress; do
  has "$out" "^kind: $kind\$" "the full rendering lacks a $kind"
done
api=$(doc Deployment pmapi-api <<<"$out"); worker=$(doc Deployment pmapi-worker <<<"$out"); job=$(doc Job pmapi-migrate <<<"$out")
has "$(grep -A1 'name: PMAPI_PUBLIC_URL' <<<"$api")" 'value: "https://api.example.com"' "the public URL does not follow the TLS ingress host"
has "$(grep -A1 'name: PMAPI_OAUTH_ISSUER' <<<"$api")" 'value: "https://api.example.com"' "the issuer does not follow the public URL"
has "$(grep -A1 'name: PMAPI_TRUSTED_PROXIES' <<<"$api")" 'value: "10.0.0.0/8,192.168.0.0/16"' "trustedProxies does not reach PMAPI_TRUSTED_PROXIES"
for d in "$api" "$worker" "$job"; do
  has "$d" 'name: PMAPI_JOB_RESCUE_AFTER' "extraEnv misses a container"
  has "$d" 'name: pmapi-extra' "extraEnvFrom misses a container"
done
has "$worker" 'value: "10s,1m"' "webhookRetrySchedule does not reach the workers"
for d in "$api" "$worker"; do
  has "$(grep -A1 'name: PMAPI_EVENT_RETENTION' <<<"$d")" 'value: "720h"' "the default event retention misses a Deployment"
done
ret=$(helm template pmapi "$chart" --set config.eventRetention=48h)
has "$(grep -A1 'name: PMAPI_EVENT_RETENTION' <<<"$(doc Deployment pmapi-worker <<<"$ret")")" 'value: "48h"' \
  "config.eventRetention does not reach the workers"
for bad in 23h 0h 30d 1h30m; do
  helm template pmapi "$chart" --set config.eventRetention=$bad >/dev/null 2>&1 &&
    fail "config.eventRetention=$bad renders; pmapi refuses less than 24h"
done
sm=$(doc ServiceMonitor pmapi <<<"$out")
has "$sm" 'pmapi/metrics: "true"' "the ServiceMonitor does not select the metrics Services"
has "$sm" 'jobLabel: app.kubernetes.io/instance' "the ServiceMonitor's job is not the release"
has "$(doc Ingress pmapi <<<"$out")" 'name: pmapi$' "the Ingress does not route to the API Service"
has "$out" 'runbook_url: https://github.com/pmapi/pmapi/blob/main/docs/operations.md#' "the PrometheusRule lacks runbook links"
out=$(helm template pmapi "$chart" --set prometheusRule.enabled=true,prometheusRule.runbookBaseURL=https://wiki.example.com/pmapi/)
has "$out" 'runbook_url: https://wiki.example.com/pmapi#' "prometheusRule.runbookBaseURL is not used"

# Explicit URLs win over the ingress; the metrics port on the API Service.
out=$(helm template pmapi "$chart" --set ingress.enabled=true,config.publicURL=https://pm.example.org/,config.oauthIssuer=https://id.example.org,service.metricsPort=true)
api=$(doc Deployment pmapi-api <<<"$out")
has "$(grep -A1 'name: PMAPI_PUBLIC_URL' <<<"$api")" 'value: "https://pm.example.org"' "config.publicURL is not used as given"
has "$(grep -A1 'name: PMAPI_OAUTH_ISSUER' <<<"$api")" 'value: "https://id.example.org"' "config.oauthIssuer is not used as given"
has "$(doc Service pmapi <<<"$out")" 'port: 9090' "service.metricsPort does not add 9090 to the API Service"
out=$(helm template pmapi "$chart" --set ingress.enabled=true)
has "$(doc Deployment pmapi-api <<<"$out")" 'value: "http://api.example.com"' "an ingress without TLS does not give an http public URL"

# The values docs/operations.md documents: the public URL is also the issuer,
# so the metadata passes RFC 8414's issuer check (the Go test
# TestChartDeploymentPassesTheIssuerCheck serves it with this environment).
out=$(helm template pmapi "$chart" --set config.publicURL=https://api.example.com --set 'config.trustedProxies={10.0.0.0/8}')
api=$(doc Deployment pmapi-api <<<"$out")
has "$(grep -A1 'name: PMAPI_PUBLIC_URL' <<<"$api")" 'value: "https://api.example.com"' "the documented public URL does not reach PMAPI_PUBLIC_URL"
has "$(grep -A1 'name: PMAPI_OAUTH_ISSUER' <<<"$api")" 'value: "https://api.example.com"' "the issuer is not the documented public URL"
has "$(grep -A1 'name: PMAPI_TRUSTED_PROXIES' <<<"$api")" 'value: "10.0.0.0/8"' "the documented trusted proxies do not reach the API"

# Citus and more shards: the owner URL reaches the API only with placementVerbs.
out=$(helm template pmapi "$chart" --set config.tenantSetting=set_local,api.placementVerbs=true,config.shardsFromSecret=true)
has "$out" 'value: "set_local"' "tenantSetting=set_local does not reach the containers"
[ "$(count "$out" 'name: PMAPI_MIGRATE_DATABASE_URL')" = 2 ] || fail "placementVerbs should add the owner URL to the API (and the migration Job has it)"
[ "$(count "$out" 'name: PMAPI_MIGRATE_SHARDS')" = 2 ] || fail "shardsFromSecret should give PMAPI_MIGRATE_SHARDS to the Job and the placement verbs"
[ "$(count "$out" 'name: PMAPI_SHARDS$')" = 2 ] || fail "shardsFromSecret should give PMAPI_SHARDS to the API and the workers"
lacks "$(doc Deployment pmapi-worker <<<"$out")" 'name: PMAPI_MIGRATE' "workers get the owner's credentials"
has "$(grep -A1 'name: PMAPI_CITUS_ROUTING' <<<"$out")" 'value: "true"' "Citus routing is not on by default"
lacks "$out" 'name: PMAPI_CITUS_NODES' "PMAPI_CITUS_NODES renders without config.citusNodes"
out=$(helm template pmapi "$chart" --set config.citusRouting=false,config.citusPlanCache=off \
  --set 'config.citusNodes={w1.internal:5432=10.0.0.5:6432,w2.internal:5432=10.0.0.6:6432}')
has "$(grep -A1 'name: PMAPI_CITUS_ROUTING' <<<"$out")" 'value: "false"' "citusRouting=false does not reach the containers"
has "$(grep -A1 'name: PMAPI_CITUS_PLAN_CACHE' <<<"$out")" 'value: "off"' "citusPlanCache does not reach the containers"
[ "$(count "$out" 'value: "w1.internal:5432=10.0.0.5:6432,w2.internal:5432=10.0.0.6:6432"')" = 3 ] ||
  fail "citusNodes should reach the API, the workers and the migration Job"

# Everything off.
out=$(helm template pmapi "$chart" --set api.autoscaling.enabled=false,api.podDisruptionBudget.enabled=false,worker.podDisruptionBudget.enabled=false,topologySpread.enabled=false,migrations.enabled=false,api.startupProbe=null,worker.startupProbe=null)
lacks "$out" '^kind: (PodDisruptionBudget|HorizontalPodAutoscaler|Job)$' "a disabled object still renders"
lacks "$out" 'topologySpreadConstraints|startupProbe' "disabled spread or startupProbe still renders"
has "$(doc Deployment pmapi-api <<<"$out")" 'replicas: 2' "without autoscaling the API has no replicas"
out=$(helm template pmapi "$chart" --set-json 'topologySpreadConstraints=[{"maxSkew":2,"topologyKey":"rack","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"a":"b"}}}]')
[ "$(count "$out" 'topologyKey: rack')" = 2 ] && lacks "$out" 'topologyKey: kubernetes.io/hostname' "topologySpreadConstraints does not replace the default spread"

promtool check rules "$chart/rules/pmapi-alerts.yaml" >/dev/null
promtool test rules charts/tests/pmapi-alerts.test.yaml
echo "chart-check: ok"
