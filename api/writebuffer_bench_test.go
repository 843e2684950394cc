package api_test

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// BenchmarkResponseWrite is how fasthttp writes an answer (headers and body
// through a bufio.Writer of Fiber's WriteBufferSize) to a loopback socket: a
// 4 KiB buffer sends a 50-task page (about 25 KB) in two write(2) calls, 32
// KiB in one (docs/decisions/reads.md; the server's own CPU per answer):
//
//	go test -run '^$' -bench ResponseWrite -benchmem ./api/
func BenchmarkResponseWrite(b *testing.B) {
	header := make([]byte, 450)
	for _, size := range []int{2 << 10, 25 << 10} {
		body := make([]byte, size)
		for _, buf := range []int{4 << 10, 32 << 10} {
			b.Run("body="+strconv.Itoa(size>>10)+"KiB/buffer="+strconv.Itoa(buf>>10)+"KiB", func(b *testing.B) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer ln.Close()
				go func() {
					c, err := ln.Accept()
					if err == nil {
						_, _ = io.Copy(io.Discard, c)
					}
				}()
				conn, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				w := bufio.NewWriterSize(conn, buf)
				b.SetBytes(int64(len(header) + len(body)))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = w.Write(header)
					_, _ = w.Write(body)
					if err := w.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkConnectionMemory is the heap an open keep-alive connection holds
// after one answer: fasthttp keeps a connection's reader and writer (the
// latter WriteBufferSize bytes) while it stays open, unless
// ReduceMemoryUsage is set. Measured once a process: closed connections give
// their buffers to fasthttp's pools, which later rounds would reuse.
//
//	bin/pmapi devdb exec -- go test -run '^$' -bench ConnectionMemory ./api/
func BenchmarkConnectionMemory(b *testing.B) {
	connMemOnce.Do(func() { connMemPerConn = openConnectionsHeap(b) })
	for b.Loop() {
	}
	b.ReportMetric(connMemPerConn, "heap-B/conn")
}

var (
	connMemOnce    sync.Once
	connMemPerConn float64
)

// openConnectionsHeap opens connections that each get one answer and stay
// open, and returns the heap they hold, per connection.
func openConnectionsHeap(b *testing.B) float64 {
	env := apitest.New(b)
	addr := strings.TrimPrefix(env.Listen(b), "http://")
	const conns = 300
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	open := make([]net.Conn, 0, conns)
	defer func() {
		for _, c := range open {
			_ = c.Close()
		}
	}()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		open = append(open, c)
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			b.Fatal(err)
		}
		if n, err := c.Read(make([]byte, 4096)); err != nil || n < 20 {
			b.Fatalf("%d %v", n, err)
		}
	}
	return float64(heap()-before) / conns
}
