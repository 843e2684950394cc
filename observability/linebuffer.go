package observability

import (
	"io"
	"sync"
	"time"
)

// LineBuffer gathers the access log's lines and writes them to w together,
// every interval or once 32 KiB are waiting, where a line per request cost
// one write(2) per request (about 2 µs of `pmapi serve`'s CPU and a wakeup of
// the reader on a pipe; docs/decisions/reads.md). Other lines go through
// it unbuffered (Write), after whatever is waiting, so the order holds. The
// price: a crash that skips Close (SIGKILL, an OOM kill, a fatal runtime
// error) loses up to interval's access lines (docs/operations.md).
type LineBuffer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	open bool // until Close: after it, buffered lines go out at once
	stop chan struct{}
	done chan struct{}
}

// lineBufferMax is how much may wait before a write flushes it.
const lineBufferMax = 32 << 10

// NewLineBuffer writes to w, flushing every interval until Close.
func NewLineBuffer(w io.Writer, interval time.Duration) *LineBuffer {
	l := &LineBuffer{
		w:    w,
		buf:  make([]byte, 0, lineBufferMax),
		open: true,
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go func() {
		defer close(l.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.mu.Lock()
				_ = l.flush()
				l.mu.Unlock()
			case <-l.stop:
				return
			}
		}
	}()
	return l
}

// Buffered is the writer of the lines that may wait.
func (l *LineBuffer) Buffered() io.Writer { return buffered{l} }

type buffered struct{ l *LineBuffer }

func (b buffered) Write(p []byte) (int, error) {
	l := b.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if len(l.buf) >= lineBufferMax || !l.open {
		if err := l.flush(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Write writes p now, after the lines waiting.
func (l *LineBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.flush(); err != nil {
		return 0, err
	}
	return l.w.Write(p)
}

// Close writes what waits and stops the flushing; lines written after it
// go out at once.
func (l *LineBuffer) Close() error {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open = false
	return l.flush()
}

// flush writes the waiting lines; l.mu is held.
func (l *LineBuffer) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}
