package main

import (
	"slices"
	"strings"
	"testing"
)

// perfScript is `perf script -F pid,ip,sym,dso` as perf 6 writes it: a
// serve send that ran the receiver's stack, a serve sample in Go code, a
// backend asleep in epoll_wait, a sample of a process of no party, and a
// backend sample perf could not unwind. perf right-aligns process ids in
// five places, so a short one starts with a space.
const perfScript = `  101 
	ffffffff81c01234 tcp_v4_rcv ([kernel.kallsyms])
	ffffffff81c00001 net_rx_action ([kernel.kallsyms])
	ffffffff81c00002 __local_bh_enable_ip ([kernel.kallsyms])
	ffffffff81c00003 tcp_sendmsg ([kernel.kallsyms])
	ffffffff81000130 entry_SYSCALL_64_after_hwframe ([kernel.kallsyms])
	          4c2a86 [unknown] (/tmp/pmapi)

  101 
	          8e2562 [unknown] (/tmp/pmapi)
	          a2e5ab [unknown] (/tmp/pmapi)

  202 
	ffffffff813a2413 finish_task_switch.isra.0 ([kernel.kallsyms])
	ffffffff817302b8 do_epoll_wait ([kernel.kallsyms])
	          108ef3 epoll_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
	          344815 secure_read (/usr/lib/postgresql/15/bin/postgres)

  999 
	ffffffff81c00001 net_rx_action ([kernel.kallsyms])

  202 

`

func TestKernelSplitCountsEachPartysKernelAndReceivePathSamples(t *testing.T) {
	var serve, pg KernelSplit
	if err := countSamples(strings.NewReader(perfScript), map[int]*KernelSplit{101: &serve, 202: &pg}); err != nil {
		t.Fatal(err)
	}
	if want := (KernelSplit{Samples: 2, Kernel: 1, ReceivePath: 1}); serve != want {
		t.Errorf("serve: %+v, want %+v", serve, want)
	}
	if want := (KernelSplit{Samples: 2, Kernel: 1}); pg != want {
		t.Errorf("postgres: %+v, want %+v", pg, want)
	}
	if kernel, rx := serve.perRequest(0.080); kernel != 40 || rx != 40 {
		t.Errorf(
			"half of serve's samples are in the kernel, all of those its peers' receive path: "+
				"%v and %v of 80 µs, want 40 and 40",
			kernel,
			rx,
		)
	}
}

func TestKernelSplitRefusesWhatIsNotPerfScriptOutput(t *testing.T) {
	if err := countSamples(strings.NewReader("perf: not a sample\n"), map[int]*KernelSplit{}); err == nil {
		t.Fatal("a line with no process id was read as a sample")
	}
}

func TestKernelSplitTableScalesEachPartysOwnCPU(t *testing.T) {
	var out strings.Builder
	printKernelSplit(&out, []Scenario{
		{Name: "read-detail"}, // not recorded: no row
		{Name: "read-list", APICPUPer1k: 0.060, PostgresCPUPer1k: 0.050, PmbenchCPUPer1k: 0.040, Perf: &PerfSplit{
			Serve:    KernelSplit{Samples: 60, Kernel: 24, ReceivePath: 10},
			Postgres: KernelSplit{Samples: 50, Kernel: 15, ReceivePath: 4},
			Pmbench:  KernelSplit{Samples: 20, Kernel: 8, ReceivePath: 1},
		}},
	})
	got := strings.Fields(out.String()[strings.Index(out.String(), "read-list"):])
	if want := []string{"read-list", "24", "10", "15", "4", "16", "2"}; !slices.Equal(got, want) {
		t.Errorf("row %q, want %q\n%s", got, want, out.String())
	}
	if strings.Contains(out.String(), "read-detail") {
		t.Errorf("a phase perf did not record has a row:\n%s", out.String())
	}
}
