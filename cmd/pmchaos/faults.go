package main

import (
	"context"
	"time"
)

// fault is one thing done to the running system, from its start until what
// was broken was back (the process restarted, PostgreSQL accepting
// connections again).
type fault struct {
	What     string
	At, Done time.Time
	Err      error
}

const (
	restartPostgres = "PostgreSQL restart -m immediate"
	killAPI         = "kill -9 pmapi serve"
	killWorker      = "kill -9 pmapi work"
	// On Citus: the workspace isolated and moved to the other worker, and
	// the worker that then holds it restarted in immediate mode.
	moveWorkspace  = "isolate and move the workspace to the other worker"
	restartItsNode = "restart -m immediate of the workspace's worker"
)

// injectFaults runs the schedule against the load that started at start: the
// worker killed at 20 % of d, the API at 40 %, PostgreSQL restarted in
// immediate mode at 60 %, the worker again at 80 %. On Citus the workspace
// moves to the other worker at 50 %, and the restart at 60 % is of the
// worker that holds it then.
func (w *world) injectFaults(ctx context.Context, start time.Time, d time.Duration) []fault {
	type step struct {
		frac float64
		what string
		do   func(context.Context) error
	}
	steps := []step{
		{0.2, killWorker, func(context.Context) error { return w.killWorker() }},
		{0.4, killAPI, w.killAPI},
		{0.6, restartPostgres, w.db.Server.CrashRestart},
		{0.8, killWorker, func(context.Context) error { return w.killWorker() }},
	}
	if w.o.Citus {
		steps = []step{steps[0], steps[1], {0.5, moveWorkspace, w.moveWorkspace},
			{0.6, restartItsNode, w.restartWorkspaceNode}, steps[3]}
	}
	var out []fault
	for _, s := range steps {
		select {
		case <-ctx.Done():
			return out
		case <-time.After(time.Until(start.Add(time.Duration(s.frac * float64(d))))):
		}
		f := fault{What: s.what, At: time.Now()}
		f.Err = s.do(ctx)
		f.Done = time.Now()
		out = append(out, f)
	}
	return out
}

// restartWindow is when PostgreSQL was away, extended by grace for the pools
// to find their dead connections; zero times when it was not restarted.
func restartWindow(faults []fault, grace time.Duration) (from, to time.Time) {
	for _, f := range faults {
		if f.What == restartPostgres || f.What == restartItsNode {
			return f.At, f.Done.Add(grace)
		}
	}
	return time.Time{}, time.Time{}
}

// inWindow reports whether a request overlapped the window.
func inWindow(a answer, from, to time.Time) bool {
	return !from.IsZero() && !a.End.Before(from) && !a.Start.After(to)
}
