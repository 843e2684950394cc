package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// circuitTransitions counts moves of subscriptions' circuits by the state they
// moved to; no subscription or workspace label (docs/operations.md, Metrics).
var circuitTransitions = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "pmapi_webhook_circuit_transitions_total",
	Help: "Subscriptions' circuit breakers moving, by the state moved to (OPEN, HALF_OPEN, CLOSED).",
}, []string{"to"})

func init() {
	// Every state from the start: dashboards and alerts see zeros, not gaps.
	for _, s := range []string{CircuitOpen, CircuitHalfOpen, CircuitClosed} {
		circuitTransitions.WithLabelValues(s)
	}
}

func circuitMoved(to string) { circuitTransitions.WithLabelValues(to).Inc() }

// CircuitTransitions exposes the counter to tests.
func CircuitTransitions(to string) prometheus.Counter { return circuitTransitions.WithLabelValues(to) }
