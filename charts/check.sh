#!/usr/bin/env bash
# Lint and render the chart, check its alert rules and dashboard. Installs helm
# (from the Go module proxy) and promtool (Debian's prometheus package) when
# missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
if ! command -v helm >/dev/null; then
  go install helm.sh/helm/v3/cmd/helm@v3.22.0
fi
if ! command -v promtool >/dev/null; then
  # The package would also start a Prometheus service; forbid service starts.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
  rm -f /usr/sbin/policy-rc.d
fi
helm lint charts/pmapi
helm lint charts/pmapi --set serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true
out=$(helm template demo charts/pmapi --set serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true)
for kind in Deployment Service Job ServiceMonitor PrometheusRule ConfigMap PodDisruptionBudget HorizontalPodAutoscaler; do
  grep -q "^kind: $kind$" <<<"$out" || { echo "rendered chart lacks a $kind"; exit 1; }
done
helm template demo charts/pmapi >/dev/null
citus=$(helm template demo charts/pmapi --set config.tenantSetting=set_local,api.placementVerbs=true)
grep -q 'value: "set_local"' <<<"$citus" || { echo "tenantSetting=set_local does not reach the containers"; exit 1; }
[ "$(grep -c 'name: PMAPI_MIGRATE_DATABASE_URL' <<<"$citus")" = 2 ] || { echo "placementVerbs should add the owner URL to the API (and the migration Job has it)"; exit 1; }
promtool check rules charts/pmapi/rules/pmapi-alerts.yaml
python3 -m json.tool charts/pmapi/dashboards/pmapi.json >/dev/null
echo "chart-check: ok"
