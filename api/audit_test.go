package api_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// auditEntries reads a workspace's whole audit log (newest first) through the
// operator's route.
func auditEntries(t *testing.T, env *apitest.Env, ws string) []map[string]any {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "GET", Path: "/admin/v1/workspaces/" + ws + "/audit?limit=200",
		Header: env.Admin()})
	if r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Raw)
	}
	return r.Items()
}

// auditCase is one audited action: do makes the change and returns the
// answer and the target the entry must name (an empty id: any id).
type auditCase struct {
	action     string
	actor      [2]string
	targetType string
	do         func(t *testing.T) (r *apitest.Response, targetID string)
}

func TestEveryAuditedActionLeavesExactlyOneEntry(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	tn := env.NewTenant(t)
	admin := func(t *testing.T, method, path string, body any) *apitest.Response {
		return env.Do(t, apitest.Request{Method: method, Path: "/admin/v1/workspaces/" + tn.WorkspaceID + path,
			Header: env.Admin(), Body: body})
	}
	user := [2]string{"user", tn.UserID}
	operator := [2]string{"operator", "admin"}
	app := [2]string{"app", tn.ClientID}
	var clientID, keyID, subID, grantID, newUser, newSID, refreshToken string
	apps := "/openapi/v1/apps/"
	hooks := func() string { return apps + tn.ClientID + "/webhooks" }
	keys := func() string { return apps + clientID + "/keys" }
	deviceFor := func(t *testing.T, decision string) (*apitest.Response, string) {
		dc := deviceCode(t, env, tn.ClientID)
		r := approve(t, tn, dc["user_code"].(string), decision)
		return r, dc["device_code"].(string)
	}
	cases := []auditCase{
		{"app.created", user, "app", func(t *testing.T) (*apitest.Response, string) {
			r := tn.Console(t, "POST", "/openapi/v1/apps",
				map[string]any{"workspaceId": tn.WorkspaceID, "name": "audited", "scopes": []string{"tasks:read"}})
			clientID = r.Str("clientId")
			return r, clientID
		}},
		{"app.updated", user, "app", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "PATCH", apps+clientID, map[string]any{"name": "renamed"}), clientID
		}},
		{"app.secret_rotated", user, "app", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "POST", apps+clientID+"/secret/rotate", nil), clientID
		}},
		{"key.created", user, "key", func(t *testing.T) (*apitest.Response, string) {
			r := tn.Console(t, "POST", keys(), map[string]any{"scopes": []string{"tasks:read"}})
			keyID = r.Str("id")
			return r, keyID
		}},
		{"key.renamed", user, "key", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "PATCH", keys()+"/"+keyID+"/name", map[string]any{"name": "ci"}), keyID
		}},
		{"key.renewed", user, "key", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "POST", keys()+"/"+keyID+"/renew", nil), keyID
		}},
		{"key.regenerated", user, "key", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "POST", keys()+"/"+keyID+"/regenerate", nil), keyID
		}},
		{"key.revoked", user, "key", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "DELETE", keys()+"/"+keyID, nil), keyID
		}},
		{"app.disabled", user, "app", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "PATCH", apps+clientID, map[string]any{"status": "DISABLED"}), clientID
		}},
		{"app.deleted", user, "app", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "DELETE", apps+clientID, nil), clientID
		}},
		{"app.rate_limit_set", operator, "app", func(t *testing.T) (*apitest.Response, string) {
			return admin(t, "PUT", "/apps/"+tn.ClientID+"/rate-limit", map[string]any{"rateLimitPerMinute": 100000}),
				tn.ClientID
		}},
		{"webhook.created", user, "webhook", func(t *testing.T) (*apitest.Response, string) {
			r := tn.Console(t, "POST", hooks(), map[string]any{"url": "https://93.184.216.34/hook", "events": []string{"*"}})
			subID = r.Str("id")
			return r, subID
		}},
		{"webhook.updated", user, "webhook", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "PATCH", hooks()+"/"+subID, map[string]any{"maxPerSecond": 5}), subID
		}},
		{"webhook.secret_rotated", user, "webhook", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "POST", hooks()+"/"+subID+"/rotate-secret", nil), subID
		}},
		{"webhook.disabled", user, "webhook", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "POST", hooks()+"/"+subID+"/disable", nil), subID
		}},
		{"webhook.enabled", user, "webhook", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "POST", hooks()+"/"+subID+"/enable", nil), subID
		}},
		{"webhook.deleted", user, "webhook", func(t *testing.T) (*apitest.Response, string) {
			return tn.Console(t, "DELETE", hooks()+"/"+subID, nil), subID
		}},
		{"user.invited", operator, "user", func(t *testing.T) (*apitest.Response, string) {
			r := admin(t, "POST", "/users", map[string]any{"email": "second@" + tn.WorkspaceID[:8] + ".example.com",
				"name": "Second"})
			newUser = r.Str("id")
			return r, newUser
		}},
		{"session.issued", operator, "session", func(t *testing.T) (*apitest.Response, string) {
			r := admin(t, "POST", "/users/"+newUser+"/sessions", nil)
			newSID = r.Str("sid")
			return r, r.Str("sessionId")
		}},
		{"oauth.device_approved", user, "grant", func(t *testing.T) (*apitest.Response, string) {
			r, device := deviceFor(t, "approve")
			status, body := poll(t, env, tn.ClientID, device)
			if status != 200 {
				t.Fatalf("token: %d %v", status, body)
			}
			refreshToken = body["refresh_token"].(string)
			return r, ""
		}},
		{"oauth.device_denied", user, "app", func(t *testing.T) (*apitest.Response, string) {
			r, _ := deviceFor(t, "deny")
			return r, tn.ClientID
		}},
		{"oauth.token_revoked", app, "grant", func(t *testing.T) (*apitest.Response, string) {
			r := env.Do(t, apitest.Request{Method: "POST", Path: "/openapi/v1/oauth/revoke",
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
				Body:   url.Values{"token": {refreshToken}, "client_id": {tn.ClientID}}.Encode()})
			return r, grantID
		}},
		{"quota.updated", operator, "workspace", func(t *testing.T) (*apitest.Response, string) {
			return admin(t, "PUT", "/quotas", map[string]any{"apps": 50, "keysPerApp": nil, "webhooks": 10,
				"requestsPerMonth": nil}), tn.WorkspaceID
		}},
		{"workspace.suspended", operator, "workspace", func(t *testing.T) (*apitest.Response, string) {
			return admin(t, "POST", "/suspend", nil), tn.WorkspaceID
		}},
		{"workspace.resumed", operator, "workspace", func(t *testing.T) (*apitest.Response, string) {
			return admin(t, "POST", "/resume", nil), tn.WorkspaceID
		}},
	}
	// The session ended is the second user's: the entry names that user.
	cases = append(cases, auditCase{"session.ended", [2]string{"user", ""}, "session",
		func(t *testing.T) (*apitest.Response, string) {
			return env.Do(t, apitest.Request{Method: "DELETE", Path: "/openapi/v1/session",
				Header:  map[string]string{"X-Client-ID": tn.ConsoleID},
				Cookies: map[string]string{"sid": newSID}}), ""
		}})
	// The order of the cases is the order of the changes: each builds on the
	// one before, so they run one after another.
	for _, c := range cases {
		ok := t.Run(c.action, func(t *testing.T) {
			before := auditEntries(t, env, tn.WorkspaceID)
			r, targetID := c.do(t)
			if r.Status >= 300 {
				t.Fatalf("the change failed: %d %s", r.Status, r.Raw)
			}
			var fresh []map[string]any
			for _, e := range auditEntries(t, env, tn.WorkspaceID) {
				if !slices.ContainsFunc(before, func(b map[string]any) bool { return b["id"] == e["id"] }) {
					fresh = append(fresh, e)
				}
			}
			if len(fresh) != 1 {
				t.Fatalf("%d new entries, want 1: %v", len(fresh), fresh)
			}
			e := fresh[0]
			actor, target := e["actor"].(map[string]any), e["target"].(map[string]any)
			if e["action"] != c.action || actor["type"] != c.actor[0] || (c.actor[1] != "" && actor["id"] != c.actor[1]) ||
				target["type"] != c.targetType || (targetID != "" && target["id"] != targetID) || target["id"] == "" {
				t.Errorf("entry %v, want %s by %v on %s %s", e, c.action, c.actor, c.targetType, targetID)
			}
			if e["requestId"] != r.Header.Get("X-Request-Id") || e["ip"] == nil {
				t.Errorf("entry %v does not name the request %s and its address", e, r.Header.Get("X-Request-Id"))
			}
			if c.action == "oauth.device_approved" {
				grantID = target["id"].(string)
			}
		})
		if !ok {
			break
		}
	}
}
