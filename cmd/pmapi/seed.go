package main

import (
	"context"
	"time"

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
	return demo{WorkspaceID: ws.ID.String(), ConsoleClientID: ws.ConsoleClientID, Email: demoEmail, SID: sid}, nil
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
