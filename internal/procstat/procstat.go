// Package procstat reads a process's CPU times from /proc/PID/stat, for the
// benchmarks that report the CPU each party spent (pmbench, the backend cost
// benchmarks): on a shared machine that figure holds still where wall time
// does not.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Indexes into Fields: the parent's pid; the process's user and system time;
// those of its reaped children.
const (
	Parent         = 1
	User           = 11
	System         = 12
	ChildrenUser   = 13
	ChildrenSystem = 14
)

// Fields reads the fields of /proc/PID/stat after the command name (which
// may hold spaces), or nil when the process is gone or not on this machine.
func Fields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) <= ChildrenSystem {
		return nil
	}
	return f
}

// Seconds sums the time fields i of f, given in USER_HZ (which Linux fixes
// at 100 for /proc).
func Seconds(f []string, i ...int) float64 {
	var sum float64
	for _, k := range i {
		v, _ := strconv.ParseFloat(f[k], 64)
		sum += v
	}
	return sum / 100
}
