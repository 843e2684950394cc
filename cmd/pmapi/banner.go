package main

import (
	"fmt"
	"io"
	"strings"
)

// banner is what pmapi dev prints once it serves: the last thing on the
// terminal, so a person finds it without scrolling. README.md shows one
// (TestREADMEShowsTheBanner holds it to this code).
type banner struct {
	Base, Metrics string
	// ConsoleLink signs the demo user in to the console, once.
	ConsoleLink string
	// OnCitus names the Citus nodes, empty on one PostgreSQL.
	OnCitus    string
	Demo       demo
	AdminToken string
	// WebhookLoopback: receivers on this machine may be subscribed.
	WebhookLoopback bool
	// DataDir keeps data and credentials across restarts; empty for
	// --ephemeral. EnvFile holds the export lines there.
	DataDir, EnvFile string
}

// exports are the shell variables the docs use, in the order printed.
func (b banner) exports() []devVar {
	d := b.Demo
	return []devVar{
		{"BASE", b.Base, ""},
		{"WORKSPACE_ID", d.WorkspaceID, "Demo workspace"},
		{"CONSOLE_CLIENT_ID", d.ConsoleClientID, "its console client"},
		{"SID", d.SID, "console session of " + d.Email},
		{"CLIENT_ID", d.AppClientID, "Demo app (every scope)"},
		{"API_KEY", d.APIKey, "the Demo app's API key"},
		{"ADMIN_TOKEN", b.AdminToken, "operator token (/admin/v1)"},
		{"CONSOLE_LINK", b.ConsoleLink, "console sign-in, works once"},
	}
}

func (b banner) write(w io.Writer) {
	var s strings.Builder
	row := func(label, value string) { fmt.Fprintf(&s, "  %-16s %s\n", label, value) }
	fmt.Fprintf(&s, "\npmapi dev is ready at %s (API and workers in one process; Ctrl-C stops it)\n\n", b.Base)
	if b.OnCitus != "" {
		row("on Citus", b.OnCitus)
	}
	row("console", b.ConsoleLink)
	row("", "(one click signs in "+b.Demo.Email+"; the link works once, the log prints the next)")
	row("API reference", b.Base+"/docs")
	row("guide", "docs/quickstart.md")
	row("device sign-in", b.Base+"/openapi/v1/oauth/device (approved in the console, signed in)")
	if b.WebhookLoopback {
		row("webhooks", "receivers on this machine are allowed, http:// too (pmapi dev only;")
		row("", "PMAPI_WEBHOOK_ALLOW_LOOPBACK=false refuses them, as production does)")
	} else {
		row("webhooks", "https:// only, receivers on this machine refused (PMAPI_WEBHOOK_ALLOW_LOOPBACK=false)")
	}
	row("metrics", b.Metrics)
	paste := "Paste into your shell:"
	if b.DataDir != "" {
		row("data", b.DataDir+" (kept across restarts, with the same credentials; --ephemeral for a throwaway run)")
		paste = "Paste into your shell (or: source " + b.EnvFile + "):"
	} else {
		row("data", "throwaway (--ephemeral): gone when pmapi stops")
	}
	fmt.Fprintf(&s, "\n%s\n\n", paste)
	for _, v := range b.exports() {
		line := "export " + v.name + "=" + v.value
		if v.note != "" {
			line = fmt.Sprintf("%-58s # %s", line, v.note)
		}
		s.WriteString("  " + line + "\n")
	}
	s.WriteString("\nThen try:\n\n")
	s.WriteString(`  curl -s "$BASE/openapi/v1/me" -H "X-Client-ID: $CLIENT_ID" -H "Authorization: $API_KEY"` + "\n\n")
	_, _ = io.WriteString(w, s.String())
}
