package observability

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the flushing goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int // writes
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	return l.b.Write(p)
}

func (l *lockedBuffer) get() (string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.n
}

// TestLineBufferKeepsOrderAndFlushes: access lines wait and leave in one
// write; any other line goes out at once after them; the interval, a full
// buffer and Close each write what waits; after Close nothing waits.
func TestLineBufferKeepsOrderAndFlushes(t *testing.T) {
	out := &lockedBuffer{}
	l := NewLineBuffer(out, time.Hour)
	access := l.Buffered()
	_, _ = access.Write([]byte("a1\n"))
	_, _ = access.Write([]byte("a2\n"))
	if got, _ := out.get(); got != "" {
		t.Fatalf("access lines written before a flush: %q", got)
	}
	_, _ = l.Write([]byte("error\n"))
	if got, n := out.get(); got != "a1\na2\nerror\n" || n != 2 {
		t.Fatalf("got %q in %d writes, want the waiting lines in one write, then the other line", got, n)
	}
	big := strings.Repeat("x", lineBufferMax)
	_, _ = access.Write([]byte(big))
	if got, _ := out.get(); !strings.HasSuffix(got, big) {
		t.Fatal("a full buffer was not written")
	}
	_, _ = access.Write([]byte("a3\n"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := out.get(); !strings.HasSuffix(got, "a3\n") {
		t.Fatal("Close did not write what waited")
	}
	_, _ = access.Write([]byte("a4\n"))
	if got, _ := out.get(); !strings.HasSuffix(got, "a4\n") {
		t.Fatal("a line after Close waited")
	}
}

func TestLineBufferFlushesEveryInterval(t *testing.T) {
	out := &lockedBuffer{}
	l := NewLineBuffer(out, 10*time.Millisecond)
	defer l.Close() //nolint:errcheck // the test reads what it wrote
	_, _ = l.Buffered().Write([]byte("a1\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got, _ := out.get(); got == "a1\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the interval did not flush the line")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
