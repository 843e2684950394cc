package webhook_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pmapi/pmapi/resource/webhook"
)

var testBreaker = webhook.Breaker{Failures: 3, Cooldown: time.Minute, MaxCooldown: 5 * time.Minute}

// TestBreakerOpensProbesAndCloses walks a circuit through its states: it
// opens on the Failures-th failure in a row (not before), keeps the time it
// opened through failed probes while each doubles the wait up to the cap, and
// a success closes it and forgets the streak.
func TestBreakerOpensProbesAndCloses(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := webhook.Health{Circuit: webhook.CircuitClosed}
	for i := 1; i < testBreaker.Failures; i++ {
		h = testBreaker.After(h, false, t0.Add(time.Duration(i)*time.Second))
		if !h.Closed() || h.Failures != i || h.ProbeAt != nil {
			t.Fatalf("after %d failures: %+v, want still CLOSED", i, h)
		}
	}
	if !h.FailingSince.Equal(t0.Add(time.Second)) {
		t.Errorf("failing since %v, want the streak's first failure", h.FailingSince)
	}
	opened := t0.Add(time.Hour)
	h = testBreaker.After(h, false, opened)
	if h.Circuit != webhook.CircuitOpen || !h.OpenedAt.Equal(opened) || !h.ProbeAt.Equal(opened.Add(time.Minute)) {
		t.Fatalf("the %dth failure: %+v, want OPEN with a probe a minute later", testBreaker.Failures, h)
	}
	if h.ProbeDue(opened.Add(59*time.Second)) || !h.ProbeDue(opened.Add(time.Minute)) {
		t.Error("the probe is due exactly at probe_at")
	}
	for i, wait := range []time.Duration{2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute} {
		h.Circuit = webhook.CircuitHalfOpen
		at := opened.Add(time.Duration(i+1) * time.Hour)
		h = testBreaker.After(h, false, at)
		if h.Circuit != webhook.CircuitOpen || !h.OpenedAt.Equal(opened) || !h.ProbeAt.Equal(at.Add(wait)) {
			t.Errorf("failed probe %d: %+v, want OPEN since %v, next probe after %v", i+1, h, opened, wait)
		}
	}
	h.Circuit = webhook.CircuitHalfOpen
	h = testBreaker.After(h, true, opened.Add(10*time.Hour))
	if h != (webhook.Health{Circuit: webhook.CircuitClosed}) || !h.Healthy() {
		t.Errorf("a successful probe: %+v, want CLOSED and nothing remembered", h)
	}
	// A failure that races an open circuit (an attempt that started before it
	// opened) counts, but does not move the probe.
	open := webhook.Health{Circuit: webhook.CircuitOpen, Failures: 3, OpenedAt: &opened, ProbeAt: &opened}
	if late := testBreaker.After(open, false, opened.Add(time.Second)); late.Failures != 4 || !late.ProbeAt.Equal(opened) {
		t.Errorf("a late failure on an open circuit: %+v", late)
	}
}

var testSchedule = []time.Duration{time.Minute, 5 * time.Minute}

// TestJudge: success; RETRYING at the schedule's step; DEAD after the last
// attempt; 410 Gone is DEAD at once and disables the subscription.
func TestJudge(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := webhook.Result{Status: 503, Err: errors.New("endpoint answered 503")}
	for _, tc := range []struct {
		attempt int
		r       webhook.Result
		status  string
		next    time.Duration
		disable bool
	}{
		{1, webhook.Result{Status: 204}, webhook.StatusSucceeded, 0, false},
		{1, fail, webhook.StatusRetrying, time.Minute, false},
		{2, fail, webhook.StatusRetrying, 5 * time.Minute, false},
		{3, fail, webhook.StatusDead, 0, false},
		{1, webhook.Result{Status: 410, Err: errors.New("gone")}, webhook.StatusDead, 0, true},
		{1, webhook.Result{Err: errors.New("dial tcp: refused")}, webhook.StatusRetrying, time.Minute, false},
	} {
		v := webhook.Judge(tc.attempt, tc.r, testSchedule, now)
		var next time.Duration
		if v.NextAt != nil {
			next = v.NextAt.Sub(now)
		}
		if v.Status != tc.status || next != tc.next || (v.Disable != "") != tc.disable {
			t.Errorf("attempt %d, %+v: %+v, want %s next in %v, disable %v", tc.attempt, tc.r, v, tc.status, tc.next, tc.disable)
		}
	}
}
