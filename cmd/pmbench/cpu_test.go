package main

import (
	"os"
	"testing"
	"time"
)

// TestSystemSecondsIsTheKernelsPartOfCPUSeconds reads /proc before and after
// reads of /dev/zero (which the kernel fills): the system part grows, to
// 0.1 s within 20 s of reading however busy the machine is (on two cores
// shared with the rest of make test, 300 ms of reading got 0.07 s of CPU), and
// never past the whole.
func TestSystemSecondsIsTheKernelsPartOfCPUSeconds(t *testing.T) {
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	pid := os.Getpid()
	sys0, all0 := systemSeconds(pid), cpuSeconds(pid)
	buf := make([]byte, 1<<20)
	start := time.Now()
	for time.Since(start) < 20*time.Second && systemSeconds(pid)-sys0 < 0.1 {
		for range 64 {
			if _, err := zero.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	sys, all := systemSeconds(pid)-sys0, cpuSeconds(pid)-all0
	if sys < 0.1 || sys > all+0.01 {
		t.Errorf("system %.2f s of %.2f s CPU for %v of reads from /dev/zero", sys, all, time.Since(start).Round(time.Millisecond))
	}
}
