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
// database keeps them), and issues a fresh session on every start: the sid is
// stored hashed, so an old one cannot be shown again.
func seedDemo(ctx context.Context, dir *tenant.Directory, ttl time.Duration) (demo, error) {
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
		user, err = authz.CreateUser(ctx, shard, ws.ID, demoEmail, "Demo User")
		if err != nil {
			return demo{}, err
		}
	}
	sid, _, err := authz.IssueSession(ctx, shard, ws.ID, user.ID, ttl)
	if err != nil {
		return demo{}, err
	}
	app, key, err := seedAppKey(ctx, dir, shard, ws, user.ID)
	if err != nil {
		return demo{}, err
	}
	return demo{WorkspaceID: ws.ID.String(), ConsoleClientID: ws.ConsoleClientID, Email: demoEmail, SID: sid,
		AppClientID: app, APIKey: key, UserID: user.ID.String()}, nil
}

const demoAppName = "Demo app"

// seedAppKey keeps one demo app with every scope and gives it a fresh key on each
// start (a key's value cannot be shown twice); the previous dev keys are revoked,
// and stay listed as revoked like any other.
func seedAppKey(ctx context.Context, dir *tenant.Directory, shard *tenant.Shard, ws tenant.Workspace, user uuid.UUID) (string, string, error) {
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
		created, _, err := authz.CreateApp(ctx, dir, shard, ws.ID, authz.NewApp{Name: demoAppName, Scopes: authz.AllScopes(), CreatedBy: user})
		if err != nil {
			return "", "", err
		}
		app = &created
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
