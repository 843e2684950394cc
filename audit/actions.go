package audit

import "slices"

// The actions recorded, "<noun>.<verb>". The list is closed so that the
// filter of the audit routes can refuse a misspelt one rather than answer an
// empty page.
const (
	AppCreated         = "app.created"
	AppUpdated         = "app.updated"
	AppDisabled        = "app.disabled"
	AppDeleted         = "app.deleted"
	AppSecretRotated   = "app.secret_rotated"
	AppRateLimitSet    = "app.rate_limit_set"
	KeyCreated         = "key.created"
	KeyRenamed         = "key.renamed"
	KeyRenewed         = "key.renewed"
	KeyRegenerated     = "key.regenerated"
	KeyRevoked         = "key.revoked"
	WebhookCreated     = "webhook.created"
	WebhookEnabled     = "webhook.enabled"
	WebhookDisabled    = "webhook.disabled"
	WebhookUpdated     = "webhook.updated"
	WebhookDeleted     = "webhook.deleted"
	WebhookRotated     = "webhook.secret_rotated"
	SessionIssued      = "session.issued"
	SessionEnded       = "session.ended"
	UserInvited        = "user.invited"
	DeviceApproved     = "oauth.device_approved"
	DeviceDenied       = "oauth.device_denied"
	TokenRevoked       = "oauth.token_revoked"
	QuotasSet          = "quota.updated"
	WorkspaceSuspended = "workspace.suspended"
	WorkspaceResumed   = "workspace.resumed"
	WorkspaceErased    = "workspace.erasure_started"
	WorkspacePlaced    = "workspace.placed"
	WorkspaceIsolated  = "workspace.isolated"
	WorkspaceMoved     = "workspace.moved"
)

// Actions lists every action, for the document's enum and the filter.
func Actions() []string {
	return []string{
		AppCreated, AppUpdated, AppDisabled, AppDeleted, AppSecretRotated, AppRateLimitSet,
		KeyCreated, KeyRenamed, KeyRenewed, KeyRegenerated, KeyRevoked,
		WebhookCreated, WebhookEnabled, WebhookDisabled, WebhookUpdated, WebhookRotated, WebhookDeleted,
		SessionIssued, SessionEnded, UserInvited,
		DeviceApproved, DeviceDenied, TokenRevoked, QuotasSet,
		WorkspaceSuspended, WorkspaceResumed, WorkspaceErased, WorkspacePlaced, WorkspaceIsolated, WorkspaceMoved,
	}
}

// Known tells whether action is one of Actions.
func Known(action string) bool { return slices.Contains(Actions(), action) }
