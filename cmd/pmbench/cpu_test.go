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
	// Read until the process has spent 0.2 s of CPU, however long a loaded
	// machine takes to give it that: the test is about whose CPU it was.
	for deadline := time.Now().Add(20 * time.Second); cpuSeconds(pid)-all0 < 0.2 && time.Now().Before(deadline); {
		if _, err := zero.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	sys, all := systemSeconds(pid)-sys0, cpuSeconds(pid)-all0
	if all < 0.2 {
		t.Skipf("the process got %.2f s of CPU in 20 s; too loaded a machine to tell", all)
	}
	if sys < all/2 || sys > all+0.01 {
		t.Errorf("system %.2f s of %.2f s CPU for reads from /dev/zero; want most of it", sys, all)
	}
}
