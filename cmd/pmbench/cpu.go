package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pmapi/pmapi/internal/procstat"
)

// cpuSeconds is the user and system time of one process.
func cpuSeconds(pid int) float64 {
	f := procstat.Fields(pid)
	if f == nil {
		return 0
	}
	return procstat.Seconds(f, procstat.User, procstat.System)
}

// systemSeconds is the part of cpuSeconds the kernel spent for the process:
// its system calls, and on loopback TCP the receiving side's network stack
// that a send runs (docs/performance.md, "Where a list page's CPU goes").
func systemSeconds(pid int) float64 {
	f := procstat.Fields(pid)
	if f == nil {
		return 0
	}
	return procstat.Seconds(f, procstat.System)
}

// selfCPUSeconds is the user and system CPU time pmbench itself (the load
// generator and the webhook receiver) has used.
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// postmasterPID finds the cluster's postmaster from postmaster.pid in its data
// directory; 0 when the server is not on this machine or not readable.
func postmasterPID(ctx context.Context, adminURL string) int {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	var dir string
	if conn.QueryRow(ctx, "show data_directory").Scan(&dir) != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if procstat.Fields(pid) == nil {
		return 0
	}
	return pid
}

// postgresCPUSeconds is the CPU time of the whole cluster: the postmaster, its
// live children (backends, walwriter, checkpointer...) and the children it has
// reaped, whose time the kernel adds to the postmaster's cutime and cstime. A
// backend that exits between two readings moves from the second sum to the
// first without being lost.
func postgresCPUSeconds(postmaster int) float64 {
	return postgresTicks(
		postmaster,
		[]int{procstat.User, procstat.System},
		[]int{procstat.ChildrenUser, procstat.ChildrenSystem},
	)
}

// postgresSystemSeconds is the system part of postgresCPUSeconds.
func postgresSystemSeconds(postmaster int) float64 {
	return postgresTicks(postmaster, []int{procstat.System}, []int{procstat.ChildrenSystem})
}

// postgresTicks sums the /proc/PID/stat fields own of the postmaster and its
// live children, and reaped (the same times of its reaped children) of the
// postmaster.
func postgresTicks(postmaster int, own, reaped []int) float64 {
	f := procstat.Fields(postmaster)
	if f == nil {
		return 0
	}
	total := procstat.Seconds(f, append(own, reaped...)...)
	for _, c := range childrenOf(postmaster) {
		total += procstat.Seconds(c, own...)
	}
	return total
}

// childrenOf returns the /proc/PID/stat fields of parent's live children.
func childrenOf(parent int) [][]string {
	var out [][]string
	eachChild(parent, func(_ int, stat []string) { out = append(out, stat) })
	return out
}

// eachChild calls f with the pid and /proc/PID/stat fields of each of
// parent's live children.
func eachChild(parent int, f func(pid int, stat []string)) {
	want := strconv.Itoa(parent)
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if pid, err := strconv.Atoi(d.Name()); err == nil && pid != parent {
			if c := procstat.Fields(pid); c != nil && c[procstat.Parent] == want {
				f(pid, c)
			}
		}
	}
}

// settledPostgresCPUSeconds is postgresCPUSeconds once the backends of clients
// that just disconnected have exited and been reaped (at most 2 s): a backend
// exiting while the cluster is being read would be counted in neither sum.
func settledPostgresCPUSeconds(postmaster int) float64 {
	if postmaster == 0 {
		return 0
	}
	prev := len(childrenOf(postmaster))
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		n := len(childrenOf(postmaster))
		if n == prev {
			break
		}
		prev = n
	}
	return postgresCPUSeconds(postmaster)
}
