package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestSecretCreatesAreNotReplayed: the spec shows app secrets, API keys and
// webhook secrets once. Retrying their create with the same Idempotency-Key
// answers 409 naming what the first request made, never the secret again, and
// the stored idempotency record holds the id only, never the secret.
func TestSecretCreatesAreNotReplayed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(d *apitest.Config) { d.WebhookAllowLoopback = true })
	tn := env.NewTenant(t)
	cases := []struct {
		name, path, secretField, idField string
		body                             map[string]any
	}{
		{
			"app",
			"/openapi/v1/apps",
			"secret",
			"clientId",
			map[string]any{"workspaceId": tn.WorkspaceID, "name": "retried", "scopes": []string{}},
		},
		{
			"key",
			"/openapi/v1/apps/" + tn.ClientID + "/keys",
			"apiKey",
			"id",
			map[string]any{"scopes": []string{"tasks:read"}},
		},
		{
			"webhook",
			"/openapi/v1/apps/" + tn.ClientID + "/webhooks",
			"secret",
			"id",
			map[string]any{"url": "https://127.0.0.1:9/hook", "events": []string{"task.created"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idemKey := "retry-" + tc.name
			send := func() *apitest.Response {
				return env.Do(t, apitest.Request{Method: "POST", Path: tc.path, Body: tc.body,
					Header:  map[string]string{"X-Client-ID": tn.ConsoleID, "Idempotency-Key": idemKey},
					Cookies: map[string]string{"sid": tn.SID}})
			}
			first := send()
			if first.Status != 201 {
				t.Fatalf("first: %d %s", first.Status, first.Raw)
			}
			secret, id := first.Str(tc.secretField), first.Str(tc.idField)
			if secret == "" || id == "" {
				t.Fatalf("first answer lacks %s or %s: %s", tc.secretField, tc.idField, first.Raw)
			}
			again := send()
			apitest.WantError(t, again, 409, "CONFLICT")
			if again.Header.Get("Idempotent-Replayed") != "true" || again.ErrorDetails()["id"] != id {
				t.Errorf("replay: %v %s; want Idempotent-Replayed and details.id %s", again.Header, again.Raw, id)
			}
			if strings.Contains(string(again.Raw), secret) {
				t.Errorf("the replay shows the secret again: %s", again.Raw)
			}
			stored := storedIdempotentAnswer(t, tn.WorkspaceID, idemKey)
			if strings.Contains(stored, secret) || !strings.Contains(stored, id) {
				t.Errorf("stored idempotency record %q: want the id %s and never the secret", stored, id)
			}
		})
	}
}

// storedIdempotentAnswer reads the kept answer of an idempotency key, bound to
// the workspace as the row-level security policies require.
func storedIdempotentAnswer(t *testing.T, workspace, idemKey string) string {
	t.Helper()
	var stored string
	err := testdb.InWorkspace(t, testdb.OwnerPool(t), workspace, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `select coalesce(convert_from(response_body, 'UTF8'), '')
			from idempotency_keys where key = $1`, idemKey).
			Scan(&stored)
	})
	if err != nil {
		t.Fatal(err)
	}
	return stored
}
