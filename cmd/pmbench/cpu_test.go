package main

import (
	"os"
	"testing"
	"time"
)

// TestSystemSecondsIsTheKernelsPartOfCPUSeconds reads /proc before and after
// 300 ms spent mostly in the kernel (reads of /dev/zero, which the kernel
// fills): the system part grows by most of that, and never past the whole.
func TestSystemSecondsIsTheKernelsPartOfCPUSeconds(t *testing.T) {
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	pid := os.Getpid()
	sys0, all0 := systemSeconds(pid), cpuSeconds(pid)
	buf := make([]byte, 1<<20)
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		if _, err := zero.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	sys, all := systemSeconds(pid)-sys0, cpuSeconds(pid)-all0
	if sys < 0.1 || sys > all+0.01 {
		t.Errorf("system %.2f s of %.2f s CPU for 300 ms of reads from /dev/zero", sys, all)
	}
}
