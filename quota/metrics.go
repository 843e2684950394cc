package quota

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Quota pressure, labelled by quota kind only (four values): which workspace
// is near its quota is in the logs of its refused requests and in
// GET /admin/v1/workspaces/{id}/quotas, not in a label that would grow with
// the workspaces.
var (
	pressure = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "pmapi_quota_pressure_ratio",
		Help: "Creations held to a count quota, by the share of the quota they leave used (used/limit after " +
			"the creation; a refused one is observed at its current use), and each workspace's month of " +
			"requests at every refresh of its requestsPerMonth quota and at every refused request, by quota.",
		Buckets: []float64{0.5, 0.8, 0.9, 1},
	}, []string{"quota"})
	exceeded = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_quota_exceeded_total",
		Help: "Creations and requests refused with 429 QUOTA_EXCEEDED, by quota.",
	}, []string{"quota"})
)

// observe records a held creation of kind k at used of limit, and whether it
// was refused. A limit of 0 is fully used.
func observe(k Kind, used, limit int64, refused bool) {
	ratio := 1.0
	if limit > 0 {
		ratio = float64(used) / float64(limit)
	}
	pressure.WithLabelValues(string(k)).Observe(ratio)
	if refused {
		exceeded.WithLabelValues(string(k)).Inc()
	}
}

// Every quota's series exist from the start, at zero, so a rule on them
// reads a value rather than nothing.
func init() {
	for _, k := range Kinds() {
		pressure.WithLabelValues(string(k))
		exceeded.WithLabelValues(string(k))
	}
}
