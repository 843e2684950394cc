package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestConsoleInChromium is a person's whole visit in headless Chromium: sign
// in at the test's OpenID Provider, create an app (its secret shown once, the
// copy button), a key with scopes (which then works against the API), a
// webhook to a receiver on this machine, send it a test (htmx), filter the
// deliveries (htmx), read the attempt log, replay one and then many (the
// workers deliver them), approve a device from its verification URI, and sign
// out. A person of another workspace sees none of it. On every console page
// axe-core (testdata/axe, injected) finds no serious or critical violation,
// and the browser logs no error and no Content-Security-Policy violation.
func TestConsoleInChromium(t *testing.T) {
	browserPath := chromium(t)
	r := newRig(t, true, person{"ada.browser@example.com", true}, person{"eve.browser@example.com", true})
	r.workspace(t, "Ada's", "ada.browser@example.com")
	r.workspace(t, "Eve's", "eve.browser@example.com")
	r.env.StartWorkers(t)
	var received atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)

	ctx, problems := startChromium(t, browserPath, r.base)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(tctx, actions...); err != nil {
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
			t.Fatalf("%s: %v\n%s", what, err, html)
		}
	}
	get := func(what string, action chromedp.Action[string]) string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(tctx, action)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	axe, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	audit := func(name string) {
		t.Helper()
		run("axe into "+name, chromedp.Evaluate[chromedp.Void](string(axe)))
		out := get("axe on "+name, chromedp.Evaluate[string](`axe.run(document).then(r => JSON.stringify(
			r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, impact: v.impact,
			nodes: v.nodes.map(n => n.html)}))))`, func(p *runtime.EvaluateParams) { p.AwaitPromise = new(true) }))
		if out != "[]" {
			t.Errorf("axe-core on %s: %s", name, out)
		}
		checked[name] = true
	}
	text := func(sel string) string {
		t.Helper()
		return get("read "+sel, chromedp.Text(chromedp.CSS(sel)))
	}
	here := func() string {
		return get("location", chromedp.Location())
	}

	// Sign in at the provider's own form.
	run("sign in", chromedp.Navigate(r.base+"/console/apps"), chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), "ada.browser@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), password), chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#app-name")))
	if !strings.HasSuffix(here(), "/console/apps") || !strings.Contains(text("header"), "ada.browser@example.com") {
		t.Fatalf("after sign-in: %s", here())
	}
	audit("apps")

	// An app: the secret once, with its copy button.
	run("create an app", chromedp.SendKeys(chromedp.CSS("#app-name"), "Browser app"),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="tasks:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="webhooks:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="webhooks:write"]`)),
		chromedp.Submit(chromedp.CSS("#app-name")), chromedp.WaitVisible(chromedp.CSS("#new-secret")))
	if !strings.HasPrefix(text("#new-secret"), "pm_sec_") {
		t.Fatalf("no secret shown: %q", text("#new-secret"))
	}
	run("copy", chromedp.Click(chromedp.CSS(`[data-copy="new-secret"]`)))
	audit("apps with a new secret")
	clientID := strings.TrimSpace(text(`.secret code`))
	run("reload", chromedp.Navigate(r.base+"/console/apps"), chromedp.WaitVisible(chromedp.CSS("#app-name")))
	count := chromedp.Evaluate[string](`String(document.querySelectorAll("#new-secret").length)`)
	if n := get("count secrets", count); n != "0" {
		t.Error("the secret is shown again")
	}

	// A key with a scope of the app's; it works against the API.
	run(
		"keys page",
		chromedp.Navigate(r.base+"/console/apps/"+clientID+"/keys"),
		chromedp.WaitVisible(chromedp.CSS("#key-name")),
	)
	audit("keys")
	run("create a key", chromedp.SendKeys(chromedp.CSS("#key-name"), "CI key"),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="tasks:read"]`)),
		chromedp.Submit(chromedp.CSS("#key-name")), chromedp.WaitVisible(chromedp.CSS("#new-key")))
	key := text("#new-key")
	me := r.env.Do(
		t,
		apitest.Request{Method: "GET", Path: "/openapi/v1/me", Header: map[string]string{"X-Client-ID": clientID,
			"Authorization": key}},
	)
	if me.Status != 200 {
		t.Errorf("the key made in the console: %d %s", me.Status, me.Raw)
	}
	audit("keys with a new key")

	// A webhook to the receiver, and a test sent with htmx.
	run("webhooks page", chromedp.Navigate(r.base+"/console/apps/"+clientID+"/webhooks"),
		chromedp.WaitVisible(chromedp.CSS("#hook-url")))
	audit("webhooks")
	run("subscribe", chromedp.SendKeys(chromedp.CSS("#hook-url"), rcv.URL+"/hook"),
		chromedp.Click(chromedp.CSS(`input[name=events][value="*"]`)),
		chromedp.Submit(chromedp.CSS("#hook-url")), chromedp.WaitVisible(chromedp.CSS("#new-secret")))
	if !strings.HasPrefix(text("#new-secret"), "whsec_") {
		t.Errorf("no signing secret: %q", text("#new-secret"))
	}
	audit("webhooks with a new secret")
	run("send a test", chromedp.Click(chromedp.CSS(`button[aria-label^="Send test"]`)),
		chromedp.WaitVisible(chromedp.CSS(`td p.notice`)))
	if got := text(`td p.notice`); !strings.HasPrefix(got, "Delivered: the endpoint answered 204") {
		t.Errorf("test result: %q", got)
	}

	// The deliveries: filtered with htmx, the attempt log, replay one.
	run("deliveries", chromedp.Navigate(r.base+"/console/apps/"+clientID+"/deliveries"),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries table`)))
	audit("deliveries")
	run(
		"filter",
		chromedp.SetValue(chromedp.CSS("#f-status"), "SUCCEEDED"),
		chromedp.Click(chromedp.CSS(`.filters button`)),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries table`)),
	)
	if !strings.Contains(here(), "status=SUCCEEDED") {
		t.Errorf("the filter's address was not pushed: %s", here())
	}
	run("a delivery", chromedp.Click(chromedp.CSS(`#deliveries td a`)), chromedp.WaitVisible(chromedp.CSS("#attempts")))
	if log := text("#attempts"); !strings.Contains(log, "succeeded") || !strings.Contains(log, "204") {
		t.Errorf("attempt log: %q", log)
	}
	audit("delivery")
	run("replay it", chromedp.Submit(chromedp.CSS(`form[action$="/replay"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	if !strings.Contains(text("p.notice"), "Replayed") {
		t.Errorf("after replay: %s", here())
	}
	waitFor(t, "the replay delivered", func() bool { return received.Load() >= 2 })

	// Replay many: every delivery listed.
	run("replay many", chromedp.Navigate(r.base+"/console/apps/"+clientID+"/deliveries"),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries table`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('input[name=ids]').forEach(c => c.click())`),
		chromedp.Submit(chromedp.CSS(`#deliveries form button`)), chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	waitFor(t, "the replays delivered", func() bool { return received.Load() >= 4 })

	// A device, approved from its verification URI with the session.
	dc := r.env.Do(
		t,
		apitest.Request{
			Method: "POST",
			Path:   "/openapi/v1/oauth/device/code",
			Body:   map[string]any{"client_id": clientID},
		},
	)
	var verify string
	_ = json.Unmarshal([]byte(`"`+dc.Body["verification_uri_complete"].(string)+`"`), &verify)
	verify = r.base + verify[strings.Index(verify, "/openapi/"):]
	run("device page", chromedp.Navigate(verify), chromedp.WaitVisible(chromedp.CSS(`button[value=approve]`)))
	if !strings.Contains(text("main"), "Browser app") || !strings.Contains(text("main"), "tasks:read") {
		t.Errorf("the device page does not show the app and its scopes: %s", text("main"))
	}
	audit("device")
	run(
		"approve",
		chromedp.Click(chromedp.CSS(`button[value=approve]`)),
		chromedp.WaitVisible(chromedp.CSS(`#message`)),
	)
	if !strings.Contains(text("main"), "Approved") {
		t.Errorf("after approval: %s", text("main"))
	}
	run("device form", chromedp.Navigate(r.base+"/console/device"), chromedp.WaitVisible(chromedp.CSS("#user-code")))
	audit("device form")

	// The audit log: the sign-in and every change above, filtered with htmx.
	run("audit log", chromedp.Navigate(r.base+"/console/audit"), chromedp.WaitVisible(chromedp.CSS(`#audit table`)))
	for _, action := range []string{"session.issued", "app.created", "key.created", "webhook.created",
		"oauth.device_approved"} {
		if !strings.Contains(text("#audit"), action) {
			t.Errorf("the audit log lacks %s:\n%s", action, text("#audit"))
		}
	}
	audit("audit log")
	run(
		"filter the audit log",
		chromedp.SetValue(chromedp.CSS("#f-action"), "key.created"),
		chromedp.Click(chromedp.CSS(`.filters button`)),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.WaitVisible(chromedp.CSS(`#audit table`)),
	)
	if log := text("#audit tbody"); !strings.Contains(here(), "action=key.created") ||
		strings.Contains(log, "app.created") || !strings.Contains(log, "key.created") {
		t.Errorf("filtered audit log at %s:\n%s", here(), log)
	}

	// Sign out: the server ends the session.
	run("sign out", chromedp.Click(chromedp.CSS(`header button`)), chromedp.WaitVisible(chromedp.CSS(`#message`)))
	if !strings.Contains(text("main"), "signed out") {
		t.Errorf("after sign-out: %s", text("main"))
	}
	audit("signed out")
	run("after sign-out", chromedp.Navigate(r.base+"/console/apps"), chromedp.WaitVisible(chromedp.CSS("#username")))

	// Another workspace's person sees none of it.
	run(
		"eve signs in",
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{})
			return err
		}),
		chromedp.Navigate(r.base+"/console/apps"),
		chromedp.WaitVisible(
			chromedp.CSS("#username"),
		),
		chromedp.SendKeys(chromedp.CSS("#username"), "eve.browser@example.com"),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#app-name")),
	)
	if body := text("body"); strings.Contains(body, "Browser app") || strings.Contains(body, clientID) {
		t.Errorf("eve sees ada's app:\n%s", body)
	}
	for _, path := range []string{"/keys", "/webhooks", "/deliveries"} {
		run(
			"eve at "+path,
			chromedp.Navigate(r.base+"/console/apps/"+clientID+path),
			chromedp.WaitVisible(chromedp.CSS("main")),
		)
		if body := text("main"); strings.Contains(body, "CI key") || strings.Contains(body, rcv.URL) ||
			!strings.Contains(body, "not found") {
			t.Errorf("eve at ada's %s:\n%s", path, body)
		}
	}
	audit("not found")
	run("eve's audit log", chromedp.Navigate(r.base+"/console/audit"), chromedp.WaitVisible(chromedp.CSS("#audit")))
	if body := text("main"); strings.Contains(body, clientID) {
		t.Errorf("eve's audit log shows ada's changes:\n%s", body)
	}

	if len(checked) < 10 {
		t.Errorf("axe-core ran on %d pages", len(checked))
	}
	for _, p := range problems() {
		// The one error expected: the 404 of the pages eve was refused.
		if strings.Contains(p, "status of 404") && strings.Contains(p, "/console/apps/"+clientID+"/") {
			continue
		}
		t.Errorf("browser: %s", p)
	}
}

// chromium finds the browser; make test installs it (charts/tools.sh), so
// there PMAPI_BROWSER_TESTS=require turns its absence into a failure.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PMAPI_BROWSER_TESTS") == "require" {
		t.Fatal("no Chromium here: make test installs it (charts/tools.sh); or apt-get install chromium")
	}
	t.Skip("no headless Chromium here (apt-get install chromium); make test installs it and does not skip")
	return ""
}

// startChromium runs a headless Chromium for the test and collects, from
// pages of base, every console error, uncaught exception and CSP violation.
func startChromium(t *testing.T, path, base string) (context.Context, func() []string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag(
			"disable-sync",
			true,
		),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	var mu sync.Mutex
	var problems []string
	note := func(s string) {
		mu.Lock()
		problems = append(problems, s)
		mu.Unlock()
	}
	var current atomic.Value
	current.Store("")
	ours := func() bool { return strings.HasPrefix(current.Load().(string), base) }
	listen := func(ev any) {
		switch e := ev.(type) {
		case *cdppage.EventFrameNavigated:
			if e.Frame.ParentID == "" {
				current.Store(e.Frame.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if (e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning) && ours() {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				note(current.Load().(string) + ": console " + string(e.Type) + ": " + strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			if ours() {
				note(current.Load().(string) + ": exception: " + e.ExceptionDetails.Text + " " + e.ExceptionDetails.URL)
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError && (strings.HasPrefix(e.Entry.URL, base) || ours()) {
				note(current.Load().(string) + ": log: " + e.Entry.Text + " " + e.Entry.URL)
			}
		}
	}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if err := chromedp.Listen(ctx, listen); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
			return err
		}
		if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
			return err
		}
		_, err := chromedp.Call(
			ctx,
			cdppage.AddScriptToEvaluateOnNewDocument,
			cdppage.AddScriptToEvaluateOnNewDocumentParams{
				Source: `document.addEventListener("securitypolicyviolation",
			e => console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI))`},
		)
		return err
	}))
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
