package usage_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/tenant/usage"
)

// BenchmarkCounterRequest is what counting costs a request: the access log's
// one call, from every core at once.
func BenchmarkCounterRequest(b *testing.B) {
	c := usage.NewCounter()
	ws, now := uuid.New().String(), time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Request(ws, "pm_cli_0123456789abcdefghij", 200, now)
		}
	})
}
