package main

import (
	"os"
	"testing"
	"time"
)

// TestSystemSecondsIsTheKernelsPartOfCPUSeconds reads /proc before and after
// 0.2 s of the process's CPU spent mostly in the kernel (reads of /dev/zero,
// which the kernel fills): the system part grows by most of that, and never
// past the whole. The figures are the whole process's, so goroutines that
// earlier tests left winding down can add user time to a try: the test
// fails only when three tries in a row show the kernel's part under half.
func TestSystemSecondsIsTheKernelsPartOfCPUSeconds(t *testing.T) {
	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer zero.Close()
	var sys, all float64
	for range 3 {
		if sys, all = readZeroFor(t, zero, 0.2); sys > all+0.01 {
			t.Fatalf("system %.2f s is more than the whole %.2f s of CPU", sys, all)
		}
		if sys >= all/2 {
			return
		}
	}
	t.Errorf("system %.2f s of %.2f s CPU for reads from /dev/zero, three times; want most of it", sys, all)
}

// readZeroFor reads zero until the process has spent cpu seconds of CPU,
// however long a loaded machine takes to give it that (the test is about
// whose CPU it was), and returns the system and the whole CPU spent.
func readZeroFor(t *testing.T, zero *os.File, cpu float64) (sys, all float64) {
	t.Helper()
	pid := os.Getpid()
	sys0, all0 := systemSeconds(pid), cpuSeconds(pid)
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(20 * time.Second); cpuSeconds(pid)-all0 < cpu && time.Now().Before(deadline); {
		if _, err := zero.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	sys, all = systemSeconds(pid)-sys0, cpuSeconds(pid)-all0
	if all < cpu {
		t.Skipf("the process got %.2f s of CPU in 20 s; too loaded a machine to tell", all)
	}
	return sys, all
}
