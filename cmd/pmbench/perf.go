package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
)

// A perfRecording is `perf record` of every CPU over one phase (-perf), with
// call chains, so the phase's kernel time can be split by what it was for.
type perfRecording struct {
	cmd    *exec.Cmd
	path   string
	stderr bytes.Buffer
}

// perfSampleHz keeps perf's own cost small beside the phase's (two CPUs, a
// few thousand samples a second with call chains).
const perfSampleHz = "499"

func startPerf(dir, phase string) (*perfRecording, error) {
	p := &perfRecording{path: filepath.Join(dir, strings.ReplaceAll(phase, " ", "-")+".perf.data")}
	p.cmd = exec.Command("perf", "record", "-e", "cpu-clock", "-F", perfSampleHz, "-g", "-a", "-q", "-o", p.path)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	return p, nil
}

// stop ends the recording as Ctrl-C would: perf writes its file and exits 0
// or with the interrupt's status.
func (p *perfRecording) stop() error {
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("perf record: %w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}

// A KernelSplit is what perf sampled of one party over a phase: all its
// samples, those in the kernel, and of those the ones in the network receive
// path (net_rx_action). On loopback a send runs the receiving socket's TCP
// stack, and wakes its reader, on the sender's CPU and in the sender's time:
// that part is work for the peer the party sent to.
type KernelSplit struct {
	Samples     int `json:"samples"`
	Kernel      int `json:"kernelSamples"`
	ReceivePath int `json:"receivePathSamples"`
}

// perRequest is the party's kernel time and, of it, its peers' receive path,
// in µs per request: perf's shares of the CPU the party was measured to
// spend (seconds per 1,000 requests, as a Scenario holds it).
func (k KernelSplit) perRequest(cpuPer1k float64) (kernel, receivePath float64) {
	if k.Samples == 0 {
		return 0, 0
	}
	perSample := cpuPer1k * 1000 / float64(k.Samples)
	return perSample * float64(k.Kernel), perSample * float64(k.ReceivePath)
}

// PerfSplit is a phase's KernelSplit of pmapi serve, the PostgreSQL cluster
// and pmbench (the load generator).
type PerfSplit struct {
	Serve    KernelSplit `json:"serve"`
	Postgres KernelSplit `json:"postgres"`
	Pmbench  KernelSplit `json:"pmbench"`
}

// split reads the recording back (`perf script`) and counts each party's
// samples; parties maps a process id to the party it belongs to.
func (p *perfRecording) split(parties map[int]*KernelSplit) error {
	cmd := exec.Command("perf", "script", "-i", p.path, "-F", "pid,ip,sym,dso")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	countErr := countSamples(out, parties)
	// perf script blocks on a full pipe if counting stopped early, and Wait
	// would wait for it for ever.
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("perf script: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return countErr
}

// countSamples reads `perf script -F pid,ip,sym,dso` output: a sample is a
// line with its process id (right-aligned, so a short one starts with
// spaces), then its call chain a frame a line (leaf first, each after a tab,
// ending with its object in parentheses), then a blank line.
func countSamples(r io.Reader, parties map[int]*KernelSplit) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		party              *KernelSplit
		leaf, inRx, kernel bool
	)
	flush := func() {
		if party != nil {
			party.Samples++
			if kernel {
				party.Kernel++
				if inRx {
					party.ReceivePath++
				}
			}
		}
		party, leaf, inRx, kernel = nil, false, false, false
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] != '\t':
			flush()
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				return fmt.Errorf("perf script: a sample line without a process id: %q", line)
			}
			party, leaf = parties[pid], true
		default:
			if leaf {
				kernel = strings.HasSuffix(line, "([kernel.kallsyms])")
				leaf = false
			}
			if fields := strings.Fields(line); len(fields) >= 2 && fields[1] == "net_rx_action" {
				inRx = true
			}
		}
	}
	flush()
	return sc.Err()
}

// printKernelSplit prints, for the phases -perf recorded, each party's
// kernel time per request and the part of it that was the receive path run
// for its peers, in µs: perf's shares of the party's measured CPU.
func printKernelSplit(w io.Writer, scenarios []Scenario) {
	var rows []Scenario
	for _, s := range scenarios {
		if s.Perf != nil {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(
		w,
		"\nKernel time by perf (-perf), CPU microseconds per request; rx: the network receive path a loopback send "+
			"runs for the receiving peer (net_rx_action)",
	)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpmapi serve kernel\trx\tpostgres kernel\trx\tpmbench kernel\trx\t")
	for _, s := range rows {
		serve, serveRx := s.Perf.Serve.perRequest(s.APICPUPer1k)
		pg, pgRx := s.Perf.Postgres.perRequest(s.PostgresCPUPer1k)
		self, selfRx := s.Perf.Pmbench.perRequest(s.PmbenchCPUPer1k)
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", s.Name, serve, serveRx, pg, pgRx, self, selfRx)
	}
	tw.Flush()
}
