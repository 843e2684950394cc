package api_test

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// BenchmarkTaskListRequest serves a full page of 50 tasks (every field set)
// through the Fiber app's handler as pmapi serve runs it: the middleware, the
// key, the store's one round trip, the page's JSON, the access line into
// serve's logger. No network, so ns/op is the server's own work plus waiting
// for PostgreSQL, and allocs/op is all the server's
// (docs/decisions/reads.md):
//
//	bin/pmapi devdb exec -- go test -run '^$' -bench TaskListRequest -benchmem ./api/
func BenchmarkTaskListRequest(b *testing.B) {
	env := apitest.New(b, asServe(b))
	tn := env.NewTenant(b)
	project := tn.Created(b, "/openapi/v1/resource/project/create", map[string]any{"name": "bench"})["id"].(string)
	for i := range 51 {
		tn.Created(
			b,
			apitest.TaskBase+"create",
			map[string]any{"projectId": project, "title": fmt.Sprintf("Replace the <worn> coupling %d", i),
				"description": "Check the alignment & the run-in", "assigneeId": tn.UserID, "reporterId": tn.UserID,
				"startDate": "2026-11-02T08:00:00Z", "dueDate": "2026-12-01T17:00:00.5Z"},
		)
	}
	path := apitest.TaskBase + "list?limit=50&projectId=" + project
	b.Run("handler", func(b *testing.B) { measureHandler(b, env.App.Handler(), path, tn, 200) })
	// Over a loopback socket, as pmbench's client reaches pmapi serve: the
	// figures then hold the client's CPU too.
	b.Run("http", func(b *testing.B) {
		base := env.Listen(b)
		client := &fasthttp.Client{}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI(base + path)
		req.Header.Set("Authorization", tn.Key)
		req.Header.Set("X-Client-ID", tn.ClientID)
		measure(b, func() []byte {
			if err := client.Do(req, resp); err != nil || resp.StatusCode() != 200 {
				b.Fatalf("%v %d %s", err, resp.StatusCode(), resp.Body())
			}
			return resp.Body()
		})
	})
}

// measure runs one request a loop and reports the process's CPU time a
// request (GC workers included: on a shared machine it is the figure that
// holds still, where wall time does not); the last answer must be JSON.
func measure(b *testing.B, request func() []byte) {
	b.ReportAllocs()
	var body []byte
	before := cpuTime(b)
	for b.Loop() {
		body = request()
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(len(body)), "body-B")
	if !json.Valid(body) {
		b.Fatalf("not JSON: %s", body)
	}
}

// measureHandler measures one request to path a loop, handed to the app's
// handler as pmapi serve's listener hands it (no network), with tn's key
// unless tn is nil; every answer must have status want.
func measureHandler(b *testing.B, handler fasthttp.RequestHandler, path string, tn *apitest.Tenant, want int) {
	var ctx fasthttp.RequestCtx
	measure(b, func() []byte {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.SetRequestURI(path)
		if tn != nil {
			ctx.Request.Header.Set("Authorization", tn.Key)
			ctx.Request.Header.Set("X-Client-ID", tn.ClientID)
		}
		handler(&ctx)
		if ctx.Response.StatusCode() != want {
			b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
		return ctx.Response.Body()
	})
}

// cpuTime is the CPU time the process has used, in nanoseconds.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
