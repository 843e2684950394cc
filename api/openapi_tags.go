package api

// platformTags describes the tags of the core's own operations; a resource
// describes its own (Resource.TagDoc).
var platformTags = map[string]string{
	"Meta": "The document itself, the reference page, health and readiness. Public.",
	"Operator admin": "The operator's API under /admin/v1 (PMAPI_ADMIN_TOKEN): " +
		"workspaces, users, sessions, rate limits, shard placement.",
	"Session": "The console session of a signed-in user (cookie sid).",
	"Apps": "Apps: the container of API access. " +
		"Created and managed by a console user (X-Client-ID and cookie sid); the secret is shown once.",
	"API keys": "Long-lived API keys of an app, scoped to a subset of its scopes; the key itself is shown once. " +
		"Also the calling credential (GET /openapi/v1/me).",
	"OAuth": "The OAuth 2.0 device authorization grant (RFC 8628), token refresh and revocation (RFC 6749, RFC 7009), " +
		"introspection (RFC 7662), JWKS and the RFC 8414 metadata.",
	"Webhooks": "Subscriptions of HTTPS endpoints to events, their signed deliveries, replay and the event-type list.",
	"Search":   "Search across projects, tasks, risks, notes, action items and analyses, best first.",
}
