// Package console is the developer console at /console: server-rendered pages
// (html/template, with htmx embedded for in-place updates) where a person
// invited to a workspace signs in with the operator's identity provider
// (OpenID Connect, authorization code with PKCE) and manages the workspace's
// apps, API keys, webhooks and deliveries, and approves OAuth devices.
//
// One path to the data: every page reads and writes through the API's own
// routes, called in-process through the same Fiber app (inproc.go) with the
// signed-in user's session and the workspace's console client id, so each
// validation, scope, tenant rule and error code is the API's, and an API
// error becomes a readable message on the page. The console itself holds no
// SQL but its sign-in state (signinstore.go).
//
// Sign-in issues the same sid session the operator's admin route issues;
// pmapi dev also signs its demo user in through a one-time link (dev.go).
// Every state-changing request carries a CSRF token bound to the session
// (csrf.go); pages are served with a Content-Security-Policy that runs no
// inline script (headers.go). docs/decisions/console.md says why.
package console
