package api_test

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pmapi/pmapi/jobs"
)

func jobsMetric(outcome string) prometheus.Collector { return jobs.DeliveryAttempts(outcome) }
func deadCounter() prometheus.Collector              { return jobs.DeadDeliveries() }
