#!/usr/bin/env bash
# Lint and render the chart, check its alert rules and dashboard. helm and
# promtool come from PATH or .tools/bin (charts/tools.sh puts them there).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PATH"
bash charts/tools.sh
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
