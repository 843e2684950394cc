package webhook

import "time"

// Circuit states of a subscription (docs/webhooks.md, "Endpoint health").
const (
	CircuitClosed   = "CLOSED"
	CircuitOpen     = "OPEN"
	CircuitHalfOpen = "HALF_OPEN"
)

// Breaker is the circuit breaker's configuration: Failures consecutive failed
// attempts open a subscription's circuit; an open circuit is probed by one
// delivery Cooldown later, and every failed probe doubles the wait up to
// MaxCooldown. While it is open no other delivery is attempted, so deliveries
// wait for the endpoint instead of spending their six attempts on it.
type Breaker struct {
	Failures    int
	Cooldown    time.Duration
	MaxCooldown time.Duration
}

// DefaultBreaker opens after 5 failures in a row (at the retry schedule's
// pace a fresh outage takes about a minute to get there when deliveries keep
// coming) and first probes a minute later.
var DefaultBreaker = Breaker{Failures: 5, Cooldown: time.Minute, MaxCooldown: time.Hour}

// Health is a subscription's circuit as stored.
type Health struct {
	Circuit      string
	Failures     int // consecutive failed attempts
	OpenedAt     *time.Time
	ProbeAt      *time.Time
	FailingSince *time.Time // the first failure of the streak (5 days of it disable)
}

// Closed says the subscription's deliveries may be sent without a probe.
func (h Health) Closed() bool { return h.Circuit == CircuitClosed || h.Circuit == "" }

// Healthy says a success would change nothing stored: no streak to end.
func (h Health) Healthy() bool { return h.Closed() && h.Failures == 0 && h.FailingSince == nil }

// ProbeDue says an open circuit may send its probe at now.
func (h Health) ProbeDue(now time.Time) bool {
	return !h.Closed() && (h.ProbeAt == nil || !now.Before(*h.ProbeAt))
}

// cooldown is the wait before the next probe of a circuit that has seen
// failures in a row.
func (b Breaker) cooldown(failures int) time.Duration {
	d := b.Cooldown
	for n := failures - b.Failures; n > 0 && d < b.MaxCooldown; n-- {
		d *= 2
	}
	return min(d, b.MaxCooldown)
}

// After applies one attempt's outcome at now: a success closes the circuit and
// ends the streak; a failure lengthens it, opens a closed circuit that reached
// Failures, and sends a failed probe back to OPEN with a longer wait.
func (b Breaker) After(h Health, ok bool, now time.Time) Health {
	if ok {
		return Health{Circuit: CircuitClosed}
	}
	h.Failures++
	if h.FailingSince == nil {
		h.FailingSince = &now
	}
	switch {
	case h.Circuit == CircuitHalfOpen, h.Closed() && h.Failures >= b.Failures:
		if h.OpenedAt == nil {
			h.OpenedAt = &now
		}
		h.Circuit = CircuitOpen
		probe := now.Add(b.cooldown(h.Failures))
		h.ProbeAt = &probe
	case h.Closed():
		h.Circuit = CircuitClosed
	}
	return h
}

// Delivery statuses.
const (
	StatusPending   = "PENDING"
	StatusRetrying  = "RETRYING"
	StatusSucceeded = "SUCCEEDED"
	StatusDead      = "DEAD"
	StatusCancelled = "CANCELLED"
)

// Verdict is what an attempt makes of its delivery.
type Verdict struct {
	Status string     // the delivery's status after the attempt
	NextAt *time.Time // RETRYING: when the next attempt is due
	// Disable, when set, is why the subscription is disabled by it.
	Disable string
}

// Judge decides a delivery's fate after its attempt-th attempt (1-based):
// success; DEAD on 410 Gone (which also disables the subscription) or after
// the last attempt; otherwise RETRYING at the schedule's next step.
func Judge(attempt int, r Result, schedule []time.Duration, now time.Time) Verdict {
	switch {
	case r.OK():
		return Verdict{Status: StatusSucceeded}
	case r.Status == 410:
		return Verdict{Status: StatusDead, Disable: "the endpoint answered 410 Gone"}
	case attempt > len(schedule):
		return Verdict{Status: StatusDead}
	}
	next := now.Add(schedule[attempt-1])
	return Verdict{Status: StatusRetrying, NextAt: &next}
}

// FailingFor is how long a subscription may fail every delivery before it is
// disabled.
const FailingFor = 5 * 24 * time.Hour

// FailedTooLong says a streak that started at since has lasted FailingFor.
func FailedTooLong(since *time.Time, now time.Time) bool {
	return since != nil && now.Sub(*since) >= FailingFor
}
