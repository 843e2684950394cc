package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestQuickstart runs docs/quickstart.md as a reader would: every ```bash
// block, in order, in one bash with `set -euo pipefail`, against `pmapi dev
// --ephemeral` with the banner's export lines loaded. A command that fails, or
// a `jq -e` that finds its value missing, fails the test at that block. Two
// things are moved out of the reader's way: the receiver listens on a free
// port instead of 4242, and is built in a temporary directory instead of bin/.
func TestQuickstart(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf(
				"docs/quickstart.md needs %s (Debian: apt-get install %s; make test puts jq in .tools/bin when missing)",
				tool,
				tool,
			)
		}
	}
	guide, err := os.ReadFile("../../docs/quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := bashBlocks(string(guide))
	if len(blocks) < 20 {
		t.Fatalf("docs/quickstart.md has %d bash blocks; the guide or its fences changed", len(blocks))
	}

	banner, stopDev := startDev(t)
	defer func() {
		if err := stopDev(); err != nil {
			t.Error(err)
		}
	}()
	vars := bannerVars(t, banner)

	tmp := t.TempDir()
	port := freeLoopbackPort(t)
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, name := range []string{
		"BASE", "WORKSPACE_ID", "CONSOLE_CLIENT_ID", "SID", "CLIENT_ID", "API_KEY", "ADMIN_TOKEN", "CONSOLE_LINK",
	} {
		fmt.Fprintf(&script, "export %s=%s\n", name, vars[name])
	}
	for _, b := range blocks {
		fmt.Fprintf(&script, "echo '### docs/quickstart.md line %d' >&2\n", b.line)
		body := strings.ReplaceAll(b.text, "127.0.0.1:4242", port)
		body = strings.ReplaceAll(body, "bin/receiver", filepath.Join(tmp, "receiver"))
		script.WriteString(body)
	}
	script.WriteString("echo '### the end' >&2\n")

	run, stop := context.WithTimeout(context.Background(), 90*time.Second)
	defer stop()
	cmd := exec.CommandContext(run, "bash", "-c", script.String())
	cmd.Dir = "../.."
	// Its own process group, so that a receiver left behind by a failed step
	// is stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("the guide's %d blocks ran in %v", len(blocks), time.Since(start).Round(time.Millisecond))
	if err != nil || !strings.Contains(out.String(), "### the end") {
		markers := regexp.MustCompile(`### docs/quickstart.md line \d+`).FindAllString(out.String(), -1)
		at := "before the first block"
		if len(markers) > 0 {
			at = "at " + strings.TrimPrefix(markers[len(markers)-1], "### ")
		}
		t.Fatalf("the quickstart failed %s: %v\n%s", at, err, lastLines(out.String(), 40))
	}
}

type bashBlock struct {
	line int
	text string
}

// bashBlocks returns the ```bash fences of a Markdown text with the line each
// starts on; ```sh fences are shown to the reader only.
func bashBlocks(md string) []bashBlock {
	var out []bashBlock
	lines := strings.SplitAfter(md, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```bash" {
			continue
		}
		b := bashBlock{line: i + 2}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b.text += lines[i]
		}
		out = append(out, b)
	}
	return out
}

func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestWebhooksGuideShowsTheReceiver holds the receiver docs/webhooks.md shows
// to docs/receiver/main.go, which the build compiles and TestQuickstart runs.
func TestWebhooksGuideShowsTheReceiver(t *testing.T) {
	guide, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile("../../docs/receiver/main.go")
	if err != nil {
		t.Fatal(err)
	}
	// The receiver is the first Go block of its own section; the verification
	// section above it shows short snippets of its own.
	_, section, _ := bytes.Cut(guide, []byte("## A receiver on your machine"))
	shown := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(section)
	if shown == nil || string(shown[1]) != string(code) {
		t.Errorf("docs/webhooks.md's receiver differs from docs/receiver/main.go; paste the file into the guide")
	}
}
