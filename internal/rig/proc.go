// Package rig runs pmapi as an operator would, for the tools that measure it
// (cmd/pmbench) and break it (cmd/pmchaos): a release build, a private
// PostgreSQL with fsync on, `pmapi serve` and `pmapi work` as processes of
// their own, a workspace with an app and a key made through the real admin and
// console APIs, and a loopback HTTPS endpoint pmapi trusts as a private CA.
package rig

import (
	"bytes"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is one pmapi process (serve or work).
type Proc struct {
	Name string
	Log  *TailBuffer
	cmd  *exec.Cmd
	done chan error
}

// Start runs `bin name` with env, keeping the last 64 KiB of its output.
func Start(bin, name string, env []string) (*Proc, error) {
	p := &Proc{Name: name, cmd: exec.Command(bin, name), Log: &TailBuffer{Max: 64 << 10}, done: make(chan error, 1)}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.Log, p.Log
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.done <- p.cmd.Wait() }()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Logs is the tail of what the process printed.
func (p *Proc) Logs() string { return p.Log.String() }

// Stop sends SIGTERM and waits at most 15 s before killing the process.
func (p *Proc) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill sends SIGKILL (no shutdown of any kind, as a crash or an OOM kill) and
// waits until the process is gone.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	err := <-p.done
	p.done <- err
}

// Err is nil while the process runs, and why it ended once it has.
func (p *Proc) Err() error {
	err, gone := p.exited()
	if gone && err == nil {
		return errors.New("exited with status 0")
	}
	return err
}

// exited reports the process's end without consuming it.
func (p *Proc) exited() (error, bool) {
	select {
	case err := <-p.done:
		p.done <- err
		return err, true
	default:
		return nil, false
	}
}

// TailBuffer keeps the last Max bytes written to it (a process's logs, shown
// when something fails), and counts the mentions of Citus's multi-shard guard
// in all of them.
type TailBuffer struct {
	mu         sync.Mutex
	buf        []byte
	Max        int
	multiShard int
}

// MultiShardError is what Citus answers a statement of the guarded server
// role that would reach more than one shard; pmapi logs the cause of a 500
// and River a failed job's error.
const MultiShardError = "multi-task query about to be executed"

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// A mention split between two writes counts once: look from where one
	// ending in p could start.
	from := max(0, len(t.buf)-len(MultiShardError)+1)
	t.buf = append(t.buf, p...)
	t.multiShard += bytes.Count(t.buf[from:], []byte(MultiShardError))
	if len(t.buf) > t.Max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.Max:]...)
	}
	return len(p), nil
}

// MultiShardErrors is how many times the logs mentioned the guard's error.
func (t *TailBuffer) MultiShardErrors() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.multiShard
}

func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
