package main

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/tenant"
)

const (
	demoWorkspaceName = "Demo workspace"
	demoEmail         = "demo@example.com"
)

// demo is what the dev banner prints.
type demo struct {
	WorkspaceID     string
	ConsoleClientID string
	Email           string
	SID             string
	AppClientID     string
	APIKey          string
	UserID          string
}

// seedDemo creates the demo workspace and its user once (a persistent dev
// database keeps them). The session and key a previous run printed (k) are
// printed again while they still work; otherwise new ones are issued.
func seedDemo(
	ctx context.Context,
	dir *tenant.Directory,
	auth *authz.Authenticator,
	ttl time.Duration,
	k kept,
) (demo, error) {
	ws, err := findWorkspace(ctx, dir, demoWorkspaceName)
	if err != nil {
		return demo{}, err
	}
	shard, err := dir.ShardOf(ws)
	if err != nil {
		return demo{}, err
	}
	user, err := authz.FindUserByEmail(ctx, shard, ws.ID, demoEmail)
	if err != nil {
		user, err = authz.InviteUser(ctx, dir, shard, ws.ID, demoEmail, "Demo User")
		if err != nil {
			return demo{}, err
		}
	}
	sid := k.SID
	if u, err := authz.VerifySession(ctx, shard, ws.ID, sid); err != nil || u.ID != user.ID {
		if sid, _, err = authz.IssueSession(ctx, shard, ws.ID, user.ID, ttl); err != nil {
			return demo{}, err
		}
	}
	app, key, err := seedAppKey(ctx, dir, auth, shard, ws, user.ID, k.APIKey)
	if err != nil {
		return demo{}, err
	}
	return demo{WorkspaceID: ws.ID.String(), ConsoleClientID: ws.ConsoleClientID, Email: demoEmail, SID: sid,
		AppClientID: app, APIKey: key, UserID: user.ID.String()}, nil
}

const demoAppName = "Demo app"

// seedAppKey keeps one demo app with every scope and its key: the previous
// one while it still authenticates with every scope, else a new one, the
// earlier dev keys revoked (they stay listed as revoked like any other).
func seedAppKey(
	ctx context.Context,
	dir *tenant.Directory,
	auth *authz.Authenticator,
	shard *tenant.Shard,
	ws tenant.Workspace,
	user uuid.UUID,
	previous string,
) (string, string, error) {
	apps, err := authz.ListApps(ctx, shard, ws.ID, "", 200)
	if err != nil {
		return "", "", err
	}
	var app *authz.App
	for i := range apps {
		if apps[i].Name == demoAppName {
			app = &apps[i]
		}
	}
	if app == nil {
		created, _, err := authz.CreateApp(
			ctx,
			dir,
			shard,
			ws.ID,
			authz.NewApp{Name: demoAppName, Scopes: authz.AllScopes(), CreatedBy: user},
		)
		if err != nil {
			return "", "", err
		}
		app = &created
	}
	if previous != "" {
		if p, err := auth.Authenticate(ctx, app.ClientID, previous); err == nil && p.Scopes.Has(authz.AllScopes()) {
			return app.ClientID, previous, nil
		}
	}
	keys, err := authz.ListKeys(ctx, shard, ws.ID, app.ClientID, uuid.Nil, 200)
	if err != nil {
		return "", "", err
	}
	for _, k := range keys {
		if k.RevokedAt == nil && k.Name == "dev" {
			if _, err := authz.RevokeKey(ctx, shard, ws.ID, app.ClientID, k.ID); err != nil {
				return "", "", err
			}
		}
	}
	_, value, err := authz.CreateKey(ctx, shard, ws.ID, app.ClientID, authz.NewKey{Name: "dev", Scopes: authz.AllScopes()})
	return app.ClientID, value, err
}

func findWorkspace(ctx context.Context, dir *tenant.Directory, name string) (tenant.Workspace, error) {
	all, err := dir.List(ctx, nil, 1000)
	if err != nil {
		return tenant.Workspace{}, err
	}
	for _, w := range all {
		if w.Name == name {
			return w, nil
		}
	}
	return dir.Create(ctx, name, "")
}
