package api

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/pmapi/pmapi"
)

// HTTP metrics, labelled by route template (never the raw path, which carries
// ids), method, status class and the envelope's error code; no workspace or
// credential label.
var (
	httpRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_http_requests_total",
		Help: "HTTP requests answered, by route template, method, status class and error code " +
			"(the envelope's, such as RATE_LIMITED; empty for successes and answers without an envelope).",
	}, []string{"route", "method", "status_class", "code"})
	httpDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pmapi_http_request_duration_seconds",
		Help:    "Time from receiving a request to writing its answer, by route template and method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"route", "method"})
)

func observeRequest(route, method string, status int, code string, seconds float64) {
	method = methodLabel(method)
	httpRequests.WithLabelValues(route, method, strconv.Itoa(status/100)+"xx", codeLabel(code)).Inc()
	httpDuration.WithLabelValues(route, method).Observe(seconds)
}

// codeLabel keeps the code label to the closed set of error codes (and "" for
// everything else), so its values stay bounded whatever reaches it.
func codeLabel(code string) string {
	if _, ok := statusOf[pmapi.Code(code)]; ok {
		return code
	}
	return ""
}

// methodLabel maps a request method to a constant string. Fiber's c.Method()
// points into fasthttp's reused request buffer; a series created with it as a
// label value would later read another request's method (POST turning into
// "GETT"), giving duplicate series that make the whole scrape fail. Constants
// also bound the label's values.
func methodLabel(m string) string {
	switch m {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "PATCH":
		return "PATCH"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	}
	return "OTHER"
}
