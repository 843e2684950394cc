package rig

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/pmapi/pmapi/internal/seal"
)

// Build builds cmd/pmapi with the release flags into dir.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "pmapi")
	cmd := exec.CommandContext(
		ctx,
		"go",
		"build",
		"-trimpath",
		"-ldflags",
		"-s -w",
		"-o",
		bin,
		"github.com/pmapi/pmapi/cmd/pmapi",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build pmapi: %v\n%s", err, out)
	}
	return bin, nil
}

// FreeAddr is a loopback address nothing listens on now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// WaitUp polls url until it answers 200, p exits, or within passes.
func WaitUp(ctx context.Context, url string, p *Proc, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if err, gone := p.exited(); gone {
			return fmt.Errorf("pmapi %s exited: %v\n%s", p.Name, err, p.Logs())
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s never answered:\n%s", url, p.Logs())
}

// Environ is the environment serve and work share: the database, the listen
// address, the operator token, one PMAPI_SECRET_KEY for both, loopback
// webhooks trusting caFile, no rate limit to speak of and a short shutdown
// grace; then extra.
func Environ(databaseURL, addr, adminToken, caFile string, extra ...string) []string {
	env := append(os.Environ(), "PMAPI_DATABASE_URL="+databaseURL, "PMAPI_ADDR="+addr,
		"PMAPI_ADMIN_TOKEN="+adminToken, "PMAPI_SECRET_KEY="+seal.Random(), "PMAPI_WEBHOOK_ALLOW_LOOPBACK=true",
		"PMAPI_WEBHOOK_CA_FILE="+caFile, "PMAPI_RATE_LIMIT_PER_MINUTE=100000000", "PMAPI_SHUTDOWN_GRACE=5s")
	return append(env, extra...)
}
