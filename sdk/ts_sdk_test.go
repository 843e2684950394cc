package pmapisdk_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/resource/webhook"
	pmapisdk "github.com/pmapi/pmapi/sdk"
)

// TestTypeScriptSDKDrivesTheServer type-checks and compiles the TypeScript
// SDK with its test (sdk/ts/test) and runs that test with node against a real
// server whose deliveries reach the test's receiver on loopback: creates,
// pages, typed errors, an idempotency key, another workspace's 404, a bearer
// token, a delivery verified with both signature schemes, and the server
// signer's signatures during a secret's rotation.
func TestTypeScriptSDKDrivesTheServer(t *testing.T) {
	t.Parallel()
	tsc := tsBin(t, "tsc")
	// Any type error, unused name or implicit any fails the build (tsconfig's
	// strict options and noEmitOnError): this is the SDK's lint.
	out := t.TempDir()
	runTS(t, tsDir, nil, nil, tsc, "--project", ".", "--outDir", out)
	// The compiled files run from out: ES modules, with the pinned packages.
	modules, err := filepath.Abs(filepath.Join(tsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(out, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "package.json"), []byte(`{"type": "module"}`), 0o600); err != nil {
		t.Fatal(err)
	}

	env := apitest.ReachingLoopbackHTTP(t, func(d *apitest.Config) { d.OAuth.Interval = time.Second })
	env.StartWorkers(t)
	base := env.Listen(t)
	a, b := env.NewTenant(t), env.NewTenant(t)
	token := deviceToken(t, base, a, "projects:read")
	// The test's webhook receiver serves on this listener, handed to node as
	// descriptor 3, so the subscription names its port before node starts.
	// node runs the file itself: node --test would run it in a child process
	// without the descriptor.
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	receiver, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	defer receiver.Close()
	_, secret := a.Subscribe(t, "http://"+ln.Addr().String()+"/pmapi", "project.created")
	report := runTS(t, out, []string{
		"PMAPI_BASE=" + base,
		"PMAPI_CLIENT_ID=" + a.ClientID, "PMAPI_API_KEY=" + a.Key,
		"PMAPI_OTHER_CLIENT_ID=" + b.ClientID, "PMAPI_OTHER_API_KEY=" + b.Key,
		"PMAPI_WEBHOOK_SECRET=" + secret, "PMAPI_ACCESS_TOKEN=" + token,
		"PMAPI_ROTATION=" + rotation(t),
	}, []*os.File{receiver}, "node", "--test-reporter=tap", filepath.Join("test", "sdk.test.js"))
	t.Log(report)
	// A skipped or unfinished case is not a pass.
	for name, want := range map[string]func(int) bool{
		"pass":    func(n int) bool { return n > 0 },
		"skipped": func(n int) bool { return n == 0 },
		"todo":    func(n int) bool { return n == 0 },
	} {
		m := regexp.MustCompile(`(?m)^# ` + name + ` (\d+)$`).FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("node's report has no %q count", name)
		}
		if n, _ := strconv.Atoi(m[1]); !want(n) {
			t.Errorf("node --test: %s %d", name, n)
		}
	}
}

// deviceToken is an access token of tn's app with scope, from a device login
// the console approves, as a user would on the device page.
func deviceToken(t *testing.T, base string, tn *apitest.Tenant, scope string) string {
	t.Helper()
	ctx := context.Background()
	conf := pmapisdk.OAuthConfig(base, tn.ClientID, scope)
	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		t.Fatalf("DeviceAuth: %v", err)
	}
	tn.Console(t, http.MethodPost, "/openapi/v1/oauth/device/approve",
		map[string]any{"user_code": da.UserCode, "action": "approve"})
	tok, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		t.Fatalf("DeviceAccessToken: %v", err)
	}
	return tok.AccessToken
}

// rotation is JSON of deliveries the server's signer signs as during a
// secret's rotation: with two secrets of the new shape, with a new and an
// old-shape one, and with an old-shape one alone (no Standard headers).
func rotation(t *testing.T) string {
	t.Helper()
	body := `{"id":"evt_1","type":"task.created","data":{}}`
	current, previous, old := webhook.NewSecret(), webhook.NewSecret(), "whsec_"+strings.Repeat("A1b", 14)+"z"
	sign := func(secrets ...string) map[string]string {
		sig := webhook.SignDelivery("evt_1", []byte(body), time.Now(), secrets...)
		h := map[string]string{pmapisdk.SignatureHeader: sig.Stripe}
		if sig.Standard != "" {
			h[pmapisdk.StandardIDHeader] = "evt_1"
			h[pmapisdk.StandardTimestampHeader] = sig.StandardTimestamp
			h[pmapisdk.StandardSignatureHeader] = sig.Standard
		}
		return h
	}
	b, err := json.Marshal(map[string]any{
		"body": body, "current": current, "previous": previous, "old": old,
		"both": sign(current, previous), "fromOld": sign(current, old), "oldOnly": sign(old),
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
