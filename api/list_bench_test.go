package api_test

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/pmapi/pmapi/api/apitest"
)

// BenchmarkTaskListRequest serves a full page of 50 tasks (every field set)
// through the Fiber app's handler as pmapi serve runs it: the middleware, the
// key, the store's one round trip, the page's JSON. No network, so ns/op is
// the server's own work plus waiting for PostgreSQL, and allocs/op is all the
// server's (docs/decisions.md, Reads):
//
//	bin/pmapi devdb exec -- go test -run '^$' -bench TaskListRequest -benchmem ./api/
func BenchmarkTaskListRequest(b *testing.B) {
	env := apitest.New(b, func(d *apitest.Config) { d.RateLimitPerMinute = 1_000_000_000 })
	tn := env.NewTenant(b)
	project := tn.Created(b, "/openapi/v1/resource/project/create", map[string]any{"name": "bench"})["id"].(string)
	for i := range 51 {
		tn.Created(b, taskBase+"create", map[string]any{"projectId": project, "title": fmt.Sprintf("Replace the <worn> coupling %d", i),
			"description": "Check the alignment & the run-in", "assigneeId": tn.UserID, "reporterId": tn.UserID,
			"startDate": "2026-11-02T08:00:00Z", "dueDate": "2026-12-01T17:00:00.5Z"})
	}
	handler := env.App.Handler()
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	before := cpuTime(b)
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.SetRequestURI(taskBase + "list?limit=50&projectId=" + project)
		ctx.Request.Header.Set("Authorization", tn.Key)
		ctx.Request.Header.Set("X-Client-ID", tn.ClientID)
		handler(&ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	// The process's CPU (GC workers included), not wall time: on a shared
	// machine it is the figure that holds still.
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
	if !json.Valid(ctx.Response.Body()) {
		b.Fatalf("not JSON: %s", ctx.Response.Body())
	}
}

// cpuTime is the CPU time the process has used, in nanoseconds.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
