package api

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// HTTP metrics, labelled by route template (never the raw path, which carries
// ids), method and status class; no workspace or credential label.
var (
	httpRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_http_requests_total",
		Help: "HTTP requests answered, by route template, method and status class.",
	}, []string{"route", "method", "status_class"})
	httpDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pmapi_http_request_duration_seconds",
		Help:    "Time from receiving a request to writing its answer, by route template and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
)

func observeRequest(route, method string, status int, seconds float64) {
	httpRequests.WithLabelValues(route, method, strconv.Itoa(status/100)+"xx").Inc()
	httpDuration.WithLabelValues(route, method).Observe(seconds)
}
