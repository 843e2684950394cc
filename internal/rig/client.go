package rig

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/pmapi/pmapi/internal/envelope"
)

// Client is a small JSON client for set-up calls: it answers data of the
// envelope, and an error for anything but a 2xx.
type Client struct {
	Base string
	HTTP *http.Client
}

// Call sends body as JSON with header and returns data.
func (c Client) Call(
	ctx context.Context,
	method, path string,
	header map[string]string,
	body any,
) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return envelope.Data(resp, method+" "+path)
}

// Tenant is a workspace with a signed-in console user and an app with a key.
type Tenant struct {
	WorkspaceID string
	// Console carries X-Client-ID and the session cookie.
	Console map[string]string
	AppID   string
	// Key carries X-Client-ID and the API key.
	Key map[string]string
}

// NewTenant makes a workspace, a user, a session, an app declaring scopes and
// a key with them, through the admin and console APIs.
func NewTenant(ctx context.Context, c Client, adminToken, name string, scopes []string) (Tenant, error) {
	var tn Tenant
	admin := map[string]string{"Authorization": "Bearer " + adminToken}
	ws, err := c.Call(ctx, "POST", "/admin/v1/workspaces", admin, map[string]any{"name": name})
	if err != nil {
		return tn, err
	}
	tn.WorkspaceID = ws["workspaceId"].(string)
	user, err := c.Call(
		ctx,
		"POST",
		"/admin/v1/workspaces/"+tn.WorkspaceID+"/users",
		admin,
		map[string]any{"email": name + "@example.com", "name": name},
	)
	if err != nil {
		return tn, err
	}
	sess, err := c.Call(
		ctx,
		"POST",
		"/admin/v1/workspaces/"+tn.WorkspaceID+"/users/"+user["id"].(string)+"/sessions",
		admin,
		nil,
	)
	if err != nil {
		return tn, err
	}
	tn.Console = map[string]string{"X-Client-ID": ws["consoleClientId"].(string), "Cookie": "sid=" + sess["sid"].(string)}
	app, err := c.Call(
		ctx,
		"POST",
		"/openapi/v1/apps",
		tn.Console,
		map[string]any{"workspaceId": tn.WorkspaceID, "name": name, "scopes": scopes},
	)
	if err != nil {
		return tn, err
	}
	tn.AppID = app["clientId"].(string)
	key, err := c.Call(ctx, "POST", "/openapi/v1/apps/"+tn.AppID+"/keys", tn.Console, map[string]any{"scopes": scopes})
	if err != nil {
		return tn, err
	}
	tn.Key = map[string]string{"X-Client-ID": tn.AppID, "Authorization": key["apiKey"].(string)}
	return tn, nil
}

// TrustFile writes srv's certificate where PMAPI_WEBHOOK_CA_FILE can name it:
// pmapi trusts the endpoint as an operator's private CA, certificate checks on.
func TrustFile(dir string, srv *httptest.Server) (string, error) {
	path := filepath.Join(dir, "receiver-ca.pem")
	return path, os.WriteFile(
		path,
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		0o600,
	)
}
