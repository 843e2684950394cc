package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/resource/registry"
	"github.com/pmapi/pmapi/tenant"
)

const adminUsage = `usage: pmapi admin <command>

  workspace create --name NAME [--shard SHARD]
  workspace list
  workspace get ID
  workspace suspend ID
  workspace resume ID
  workspace place ID --shard SHARD
  workspace placement ID             where its rows live on a Citus cluster
  workspace isolate ID               Citus: give it shards of its own (its range's writes wait for the split)
  workspace move ID --node HOST:PORT Citus: move its shards to another node (online)
  workspace export ID                every row of it as NDJSON on standard output, from one snapshot
  workspace erase ID                 cut its credentials off now and queue the erasure of every row of it
  workspace quotas ID [--apps N] [--keys-per-app N] [--webhooks N] [--requests-per-month N]
                                     its quotas and their use; with any flag, sets all four (an omitted
                                     one, or "unlimited", is unlimited)
  workspace audit ID [--action A] [--since RFC3339]  its audit log, newest first (200 entries)
  workspace usage ID [--from DATE] [--to DATE]
                                     requests, events and deliveries per app and UTC day (dates YYYY-MM-DD;
                                     default the last 30 days); the last minute is not flushed yet
  user create --workspace ID --email EMAIL --name NAME
  session issue --workspace ID --user USER_ID [--ttl 720h]
  oauth rotate-key        new signing key; the old one stays published until its tokens expire
  reseal                  rewrite every sealed value under PMAPI_SECRET_KEY (online, resumable;
                          PMAPI_SECRET_KEY_PREVIOUS opens the others)
  key-check KEY...        offline check of API keys' format and checksum (no database; same as pmapi key-check)

Each command is the /admin/v1 operation of the same name, run in-process against
PMAPI_DATABASE_URL, so validation and output are exactly the HTTP API's. The
Citus verbs run as the tables' owner: they need PMAPI_MIGRATE_DATABASE_URL.
`

func runAdmin(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) >= 1 && args[0] == "key-check" {
		return runKeyCheck(args[1:], stdout)
	}
	if len(args) >= 2 && args[0] == "oauth" && args[1] == "rotate-key" {
		return rotateKey(ctx, stdout)
	}
	if len(args) >= 1 && args[0] == "reseal" {
		return runReseal(ctx, args[1:], stdout)
	}
	if len(args) < 2 {
		fmt.Fprint(os.Stderr, adminUsage)
		return fmt.Errorf("missing admin command")
	}
	method, path, body, err := adminRequest(args[0], args[1], args[2:])
	if err != nil {
		fmt.Fprint(os.Stderr, adminUsage)
		return err
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	shards, err := openShards(ctx, cfg)
	if err != nil {
		return err
	}
	defer shards.Close()
	placer, err := openPlacer(ctx, cfg)
	if err != nil {
		return err
	}
	if placer != nil {
		defer placer.Close()
	}
	if args[0] == "workspace" && args[1] == "export" {
		return exportWorkspace(ctx, tenant.NewDirectory(shards), path, stdout)
	}
	return callAdmin(ctx, tenant.NewDirectory(shards), placer, method, path, body, stdout)
}

// adminRequest maps a CLI command onto its admin API request.
func adminRequest(noun, verb string, args []string) (method, path string, body any, err error) {
	fs := flag.NewFlagSet(noun+" "+verb, flag.ContinueOnError)
	name := fs.String("name", "", "name")
	shard := fs.String("shard", "", "shard")
	workspace := fs.String("workspace", "", "workspace id")
	email := fs.String("email", "", "email")
	user := fs.String("user", "", "user id")
	ttl := fs.Duration("ttl", 0, "session lifetime")
	node := fs.String("node", "", "Citus node HOST:PORT")
	action := fs.String("action", "", "audit action")
	since := fs.String("since", "", "audit entries since (RFC 3339)")
	limits := map[string]*string{}
	for _, q := range quotaFlags {
		limits[q] = fs.String(q, "", "quota: a number, or unlimited")
	}
	from := fs.String("from", "", "first UTC day, YYYY-MM-DD")
	to := fs.String("to", "", "last UTC day, YYYY-MM-DD")
	// Flags may follow the positional id.
	var positional []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return "", "", nil, err
		}
		args = fs.Args()
		if len(args) > 0 {
			positional = append(positional, args[0])
			args = args[1:]
		}
	}
	id := func() (string, error) {
		if len(positional) != 1 {
			return "", fmt.Errorf("%s %s takes one workspace id", noun, verb)
		}
		return positional[0], nil
	}
	ws := "/admin/v1/workspaces"
	switch noun + " " + verb {
	case "workspace create":
		return "POST", ws, api.CreateWorkspaceRequest{Name: *name, Shard: *shard}, nil
	case "workspace list":
		return "GET", ws + "?limit=200", nil, nil
	case "workspace get", "workspace suspend", "workspace resume", "workspace place",
		"workspace placement", "workspace isolate", "workspace move", "workspace export", "workspace erase",
		"workspace quotas", "workspace audit", "workspace usage":
		wid, err := id()
		if err != nil {
			return "", "", nil, err
		}
		switch verb {
		case "get":
			return "GET", ws + "/" + wid, nil, nil
		case "place":
			return "PUT", ws + "/" + wid + "/shard", api.PlaceWorkspaceRequest{Shard: *shard}, nil
		case "placement":
			return "GET", ws + "/" + wid + "/placement", nil, nil
		case "move":
			return "POST", ws + "/" + wid + "/move", api.MoveWorkspaceRequest{Node: *node}, nil
		case "export":
			return "GET", ws + "/" + wid + "/export", nil, nil
		case "erase":
			return "DELETE", ws + "/" + wid, nil, nil
		case "quotas":
			return quotasRequest(fs, ws+"/"+wid+"/quotas", limits)
		case "audit":
			q := url.Values{"limit": {"200"}}
			if *action != "" {
				q.Set("action", *action)
			}
			if *since != "" {
				q.Set("since", *since)
			}
			return "GET", ws + "/" + wid + "/audit?" + q.Encode(), nil, nil
		case "usage":
			q := url.Values{}
			if *from != "" {
				q.Set("from", *from)
			}
			if *to != "" {
				q.Set("to", *to)
			}
			path := ws + "/" + wid + "/usage"
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			return "GET", path, nil, nil
		}
		return "POST", ws + "/" + wid + "/" + verb, nil, nil
	case "user create":
		return "POST", ws + "/" + *workspace + "/users", api.CreateUserRequest{Email: *email, Name: *name}, nil
	case "session issue":
		return "POST", ws + "/" + *workspace + "/users/" + *user + "/sessions",
			api.IssueSessionRequest{TTLSeconds: int(*ttl / time.Second)}, nil
	}
	return "", "", nil, fmt.Errorf("unknown admin command %q", noun+" "+verb)
}

// callAdmin runs one admin request through the real app with a one-off operator
// token and prints its data (or its error) as JSON.
func callAdmin(
	ctx context.Context,
	dir *tenant.Directory,
	placer *tenant.Placer,
	method, path string,
	body any,
	out io.Writer,
) error {
	token := pmapi.RandomBase62(32)
	// The admin operations never touch webhooks: a throwaway box will do.
	box, _ := seal.New(seal.Random())
	resources, err := registry.Resources(registry.Deps{Events: event.Discard{}, SecretBox: box})
	if err != nil {
		return err
	}
	app, _, err := api.New(api.Deps{Directory: dir, AdminToken: token, Placer: placer}, resources)
	if err != nil {
		return err
	}
	var reader io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		reader = bytes.NewReader(b)
	}
	req := httptest.NewRequestWithContext(ctx, method, path, reader)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := app.Test(req, -1)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("unexpected answer %d: %s", resp.StatusCode, strings.TrimSpace(string(raw)))
	}
	var pretty bytes.Buffer
	if !env.Success {
		_ = json.Indent(&pretty, env.Error, "", "  ")
		return fmt.Errorf("%d %s", resp.StatusCode, pretty.String())
	}
	_ = json.Indent(&pretty, env.Data, "", "  ")
	fmt.Fprintln(out, pretty.String())
	return nil
}

// rotateKey makes a new OAuth signing key (PMAPI_SECRET_KEY seals it); the old
// key stops signing and stays in the JWKS for the access-token lifetime.
func rotateKey(ctx context.Context, out io.Writer) error {
	cfg, box, dir, closeShards, err := sealedDirectory(ctx)
	if err != nil {
		return err
	}
	defer closeShards()
	kid, err := authz.NewKeyRing(dir.Pool(), box).Rotate(ctx, cfg.OAuthAccessTTL)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "{\n  \"kid\": %q\n}\n", kid)
	return nil
}
