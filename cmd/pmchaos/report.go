package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// result is everything one run measured.
type result struct {
	seed     uint64
	start    time.Time // the load's
	grace    time.Duration
	faults   []fault
	load     loadSummary
	drain    time.Duration
	drained  bool
	counts   counts
	receiver receiverSummary
}

// split sorts the failed answers: 5xx inside the PostgreSQL restart window,
// 5xx outside it, and 4xx (the load sends only valid requests).
func (r *result) split() (inside, outside, client []answer) {
	from, to := restartWindow(r.faults, r.grace)
	for _, a := range r.load.Failed {
		switch {
		case a.Status >= 500 && inWindow(a, from, to):
			inside = append(inside, a)
		case a.Status >= 500:
			outside = append(outside, a)
		default:
			client = append(client, a)
		}
	}
	return inside, outside, client
}

// unanswered splits the requests that got no answer: while the API was
// killed and restarting (until it answered /healthz, plus a second for the
// clients' dead keep-alive connections), and otherwise.
func (r *result) unanswered() (during, otherwise []answer) {
	for _, a := range r.load.Transport {
		in := false
		for _, f := range r.faults {
			if f.What == killAPI && inWindow(a, f.At, f.Done.Add(time.Second)) {
				in = true
			}
		}
		if in {
			during = append(during, a)
		} else {
			otherwise = append(otherwise, a)
		}
	}
	return during, otherwise
}

// span is when the first and the last of as started, relative to start.
func span(as []answer, start time.Time) string {
	if len(as) == 0 {
		return ""
	}
	return fmt.Sprintf(
		", from %.2f s to %.2f s",
		as[0].Start.Sub(start).Seconds(),
		as[len(as)-1].Start.Sub(start).Seconds(),
	)
}

// tally counts answers by status and code: "500 INTERNAL ×12".
func tally(as []answer) string {
	n := map[string]int{}
	for _, a := range as {
		n[fmt.Sprintf("%d %s", a.Status, a.Code)]++
	}
	var parts []string
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func (r *result) print(w io.Writer, o options) {
	start := r.start
	fmt.Fprintf(w, "\npmchaos: %v of load, %d clients, seed %d\n", o.Duration, o.Concurrency, r.seed)
	for _, f := range r.faults {
		status := "back"
		if f.Err != nil {
			status = "FAILED: " + f.Err.Error()
		}
		fmt.Fprintf(
			w,
			"  %-32s at %5.1f s, %s after %.1f s\n",
			f.What,
			f.At.Sub(start).Seconds(),
			status,
			f.Done.Sub(f.At).Seconds(),
		)
	}
	from, to := restartWindow(r.faults, o.Grace)
	if !from.IsZero() {
		fmt.Fprintf(
			w,
			"  restart window: %.1f s to %.1f s (PostgreSQL back, plus %v)\n",
			from.Sub(start).Seconds(),
			to.Sub(start).Seconds(),
			o.Grace,
		)
	}
	c := r.counts
	during, otherwise := r.unanswered()
	fmt.Fprintf(
		w,
		"\nrequests: %d; acknowledged writes: %d (%d creates, %d updates)\n",
		r.load.Requests,
		c.Acked,
		c.AckedCreates,
		c.AckedUpdates,
	)
	var kinds []string
	for k := range r.load.Acked {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-22s %d\n", k, r.load.Acked[k])
	}
	fmt.Fprintf(w, "no answer: %d while the API restarted, %d otherwise\n", len(during), len(otherwise))
	for i, a := range otherwise {
		if i == 5 {
			break
		}
		fmt.Fprintf(w, "  %s at %.2f s: %s\n", a.Op, a.Start.Sub(start).Seconds(), a.Code)
	}
	fmt.Fprintf(
		w,
		"rows: %d of %d acknowledged creates present, %d of %d acknowledged updates still held\n",
		c.RowsFound,
		c.AckedCreates,
		c.UpdatesFound,
		c.AckedUpdates,
	)
	fmt.Fprintf(
		w,
		"events: %d of %d acknowledged writes have their event; %d events since the subscription\n",
		c.EventsFound,
		c.Acked,
		c.Events,
	)
	fmt.Fprintf(
		w,
		"deliveries: %d events, %d delivery rows, %d distinct deliveries received "+
			"(%d requests, %d bad signatures, %d DEAD)\n",
		c.Events,
		c.DeliveryRows,
		c.Received,
		r.receiver.Requests,
		r.receiver.BadSignatures,
		c.Dead,
	)
	state := "all delivered"
	if !r.drained {
		state = "NOT all delivered"
	}
	fmt.Fprintf(w, "drain: %.1f s after the load (bound %v), %s\n", r.drain.Seconds(), o.Drain, state)
	inside, outside, client := r.split()
	fmt.Fprintf(w, "5xx outside the restart window: %d (%s)\n", len(outside), tally(outside))
	fmt.Fprintf(w, "5xx inside the restart window: %d (%s%s)\n", len(inside), tally(inside), span(inside, start))
	fmt.Fprintf(w, "4xx: %d (%s)\n", len(client), tally(client))
	for _, a := range append(outside, client...) {
		fmt.Fprintf(w, "  %s at %.2f s: %d %s\n", a.Op, a.Start.Sub(start).Seconds(), a.Status, a.Code)
	}
	for i, l := range append(c.Lost, c.Missing...) {
		if i == 20 {
			fmt.Fprintf(w, "  ... and %d more\n", len(c.Lost)+len(c.Missing)-20)
			break
		}
		fmt.Fprintln(w, "  "+l)
	}
}

// failures lists why the run failed, if it did.
func (r *result) failures(strict bool) []string {
	var out []string
	for _, f := range r.faults {
		if f.Err != nil {
			out = append(out, fmt.Sprintf("%s: %v", f.What, f.Err))
		}
	}
	if len(r.faults) < 4 {
		out = append(out, fmt.Sprintf("only %d of 4 faults ran", len(r.faults)))
	}
	c := r.counts
	if n := c.AckedCreates - c.RowsFound + c.AckedUpdates - c.UpdatesFound; n > 0 {
		out = append(out, fmt.Sprintf("%d acknowledged writes lost", n))
	}
	if n := c.Acked - c.EventsFound; n > 0 {
		out = append(out, fmt.Sprintf("%d acknowledged writes without their event", n))
	}
	if !r.drained || len(c.Missing) > 0 {
		out = append(out, fmt.Sprintf("%d of %d events not delivered after the drain", len(c.Missing), c.Events))
	}
	if r.receiver.BadSignatures > 0 {
		out = append(out, fmt.Sprintf("%d deliveries with a bad signature", r.receiver.BadSignatures))
	}
	if c.Acked == 0 {
		out = append(out, "no write was acknowledged")
	}
	inside, outside, client := r.split()
	if len(outside) > 0 {
		out = append(out, fmt.Sprintf("%d 5xx outside the restart window", len(outside)))
	}
	if unclean := notUnavailable(inside); strict && len(unclean) > 0 {
		out = append(
			out,
			fmt.Sprintf("%d 5xx inside the restart window other than 503 with Retry-After (-strict)", len(unclean)),
		)
	}
	if len(client) > 0 {
		out = append(out, fmt.Sprintf("%d 4xx answers to valid requests", len(client)))
	}
	if _, otherwise := r.unanswered(); len(otherwise) > 0 {
		out = append(out, fmt.Sprintf("%d requests without an answer while the API was up", len(otherwise)))
	}
	return out
}

// notUnavailable keeps the answers that are not what a client can act on
// while the database restarts: 503 SERVICE_UNAVAILABLE with Retry-After.
func notUnavailable(as []answer) []answer {
	var out []answer
	for _, a := range as {
		if a.Status != 503 || a.Code != "SERVICE_UNAVAILABLE" || a.RetryAfter == "" {
			out = append(out, a)
		}
	}
	return out
}
