package api_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestDocumentMatchesRouter holds the router and the document equal: every route
// served is documented, and every documented operation is served.
func TestDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	served := map[string]bool{}
	for _, r := range env.App.GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == "USE" || strings.HasPrefix(r.Path, api.RiverUIPrefix) {
			continue // River UI is an operator tool with its own API, outside the document
		}
		served[r.Method+" "+toOpenAPIPath(r.Path)] = true
	}
	documented := map[string]bool{}
	for path, item := range env.Server.Document().Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("served but not documented: %s", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("documented but not served: %s", k)
		}
	}
	if len(served) == 0 {
		t.Fatal("no routes served")
	}
}

func toOpenAPIPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

func TestServesDocument(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	resp := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/openapi.json"})
	if resp.Status != 200 {
		t.Fatalf("status %d", resp.Status)
	}
	if got := resp.Body["openapi"]; got == nil || !strings.HasPrefix(got.(string), "3.") {
		t.Errorf("openapi = %v, want 3.x", got)
	}
	info := resp.Body["info"].(map[string]any)
	if info["version"] != "0.1.0" {
		t.Errorf("info.version = %v, want 0.1.0", info["version"])
	}
	schemes := resp.Body["components"].(map[string]any)["securitySchemes"].(map[string]any)
	var headers []string
	for _, s := range schemes {
		m := s.(map[string]any)
		if m["type"] == "apiKey" && m["in"] == "header" {
			headers = append(headers, m["name"].(string))
		}
	}
	sort.Strings(headers)
	if strings.Join(headers, ",") != "Authorization,X-Client-ID" {
		t.Errorf("API-key header schemes = %v, want Authorization and X-Client-ID", headers)
	}
}

// TestEveryOperationIsDescribed keeps each operation documented enough for a
// generated client: an id, a summary, a tag and a typed success answer.
func TestEveryOperationIsDescribed(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	ids := map[string]bool{}
	for _, op := range env.Server.Operations() {
		if op.ID == "" || op.Summary == "" || op.Tag == "" || op.Status == 0 {
			t.Errorf("%s %s lacks an id, summary, tag or status", op.Method, op.Path)
		}
		if ids[op.ID] {
			t.Errorf("operationId %s used twice", op.ID)
		}
		ids[op.ID] = true
		// The document itself and the reference page's scripts are not JSON.
		if op.Result == nil && op.Path != "/openapi/v1/openapi.json" && op.Path != "/docs/{file}" && !op.HTML {
			t.Errorf("%s has no result type", op.ID)
		}
		// The scope table: every key-authenticated route names its scope, or
		// says it checks scopes itself.
		if op.Auth == api.AuthKey && op.Scope == "" && !op.ScopeInHandler {
			t.Errorf("%s %s (%s) has no scope entry", op.Method, op.Path, op.ID)
		}
		if op.Auth != api.AuthKey && (op.Scope != "" || op.ScopeInHandler) {
			t.Errorf("%s names a scope but is not key-authenticated", op.ID)
		}
	}
}

// TestAppAndKeySchemasCarryExamples keeps the credential operations' request
// and response schemas illustrated: each field an integrator copies from has
// an example value in the document.
func TestAppAndKeySchemasCarryExamples(t *testing.T) {
	t.Parallel()
	env := apitest.Shared(t)
	schemas := env.Server.Document().Components.Schemas
	want := map[string][]string{
		"AppCreated":           {"clientId", "name", "scopes", "secret", "secretPrefix"},
		"CreateAppRequest":     {"name", "description", "scopes"},
		"KeyCreated":           {"id", "clientId", "name", "apiKey", "prefix", "lastFour", "scopes", "expiresAt"},
		"KeyView":              {"id", "clientId", "name", "prefix", "lastFour", "scopes", "expiresAt"},
		"CreateKeyRequest":     {"name", "scopes", "expiresAt"},
		"RenameKeyRequest":     {"name"},
		"RenewKeyRequest":      {"expiresAt"},
		"RegenerateKeyRequest": {"graceSeconds"},
	}
	for schema, fields := range want {
		ref := schemas[schema]
		if ref == nil || ref.Value == nil {
			t.Errorf("no component schema %s", schema)
			continue
		}
		for _, f := range fields {
			p := ref.Value.Properties[f]
			if p == nil || p.Value == nil {
				t.Errorf("%s has no property %s", schema, f)
				continue
			}
			if p.Value.Example == nil {
				t.Errorf("%s.%s has no example", schema, f)
				continue
			}
			if err := p.Value.VisitJSON(p.Value.Example); err != nil {
				t.Errorf("%s.%s example %v does not fit its schema: %v", schema, f, p.Value.Example, err)
			}
		}
	}
	if ex, _ := schemas["KeyCreated"].Value.Properties["apiKey"].Value.Example.(string); !authz.CheckAPIKey(ex) {
		t.Errorf("the apiKey example %q does not pass the key checksum", ex)
	}
}
