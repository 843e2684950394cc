package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// procStat reads the fields of /proc/PID/stat after the command name: [1] is
// the parent's pid; [11], [12] are the process's user and system time and
// [13], [14] those of its waited-for children, in USER_HZ (which Linux fixes
// at 100 for /proc).
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return nil
	}
	return f
}

func ticks(f []string, i ...int) float64 {
	var sum float64
	for _, k := range i {
		v, _ := strconv.ParseFloat(f[k], 64)
		sum += v
	}
	return sum / 100
}

// cpuSeconds is the user and system time of one process.
func cpuSeconds(pid int) float64 {
	f := procStat(pid)
	if f == nil {
		return 0
	}
	return ticks(f, 11, 12)
}

// systemSeconds is the part of cpuSeconds the kernel spent for the process:
// its system calls, and on loopback TCP the receiving side's network stack
// that a send runs (README, Performance: where a list page's CPU goes).
func systemSeconds(pid int) float64 {
	f := procStat(pid)
	if f == nil {
		return 0
	}
	return ticks(f, 12)
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
	if procStat(pid) == nil {
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
	return postgresTicks(postmaster, []int{11, 12}, []int{13, 14})
}

// postgresSystemSeconds is the system part of postgresCPUSeconds.
func postgresSystemSeconds(postmaster int) float64 {
	return postgresTicks(postmaster, []int{12}, []int{14})
}

// postgresTicks sums the /proc/PID/stat fields own of the postmaster and its
// live children, and reaped (the same times of its reaped children) of the
// postmaster.
func postgresTicks(postmaster int, own, reaped []int) float64 {
	f := procStat(postmaster)
	if f == nil {
		return 0
	}
	total := ticks(f, append(own, reaped...)...)
	for _, c := range childrenOf(postmaster) {
		total += ticks(c, own...)
	}
	return total
}

// childrenOf returns the /proc/PID/stat fields of parent's live children.
func childrenOf(parent int) [][]string {
	var out [][]string
	want := strconv.Itoa(parent)
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if pid, err := strconv.Atoi(d.Name()); err == nil && pid != parent {
			if c := procStat(pid); c != nil && c[1] == want {
				out = append(out, c)
			}
		}
	}
	return out
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
