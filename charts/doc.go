// Package charts holds no code. Its tests hold the Helm chart's monitoring
// files to what the metrics and the docs promise: the dashboard's queries
// (scoped to the chosen namespace and release, queue gauges never summed over
// pods, all valid PromQL), and for every alert a runbook section in
// docs/operations.md and a promtool test case that fires and one that does not.
package charts
