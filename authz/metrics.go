package authz

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/pmapi/pmapi"
)

var (
	authAttempts = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_auth_attempts_total",
		Help: "Resource-call authentications, by outcome: ok or the error code.",
	}, []string{"outcome"})
	keyCacheLookups = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "pmapi_auth_key_cache_lookups_total",
		Help: "API-key cache lookups, by result (hit or miss).",
	}, []string{"result"})
	cacheHit, cacheMiss = keyCacheLookups.WithLabelValues("hit"), keyCacheLookups.WithLabelValues("miss")
	authOK              = authAttempts.WithLabelValues("ok")
)

func countAttempt(err error) {
	if err == nil {
		authOK.Inc()
		return
	}
	authAttempts.WithLabelValues(string(pmapi.ErrorCode(err))).Inc()
}
