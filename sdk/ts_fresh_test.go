package pmapisdk_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// tsSchema is the TypeScript SDK's generated types, checked in.
var tsSchema = filepath.Join(tsDir, "src", "schema.gen.ts")

// TestSDKIsFreshTypeScript regenerates the TypeScript SDK's types from the
// served document with the openapi-typescript version sdk/ts pins, and fails
// when sdk/ts/src/schema.gen.ts differs; with -update (make sdk) it writes
// them instead.
func TestSDKIsFreshTypeScript(t *testing.T) {
	t.Parallel()
	gen := tsBin(t, "openapi-typescript")
	env := apitest.Shared(t)
	doc := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/openapi.json"})
	// A directory of its own: openapi-typescript reads a redocly.yaml in its
	// working directory, and none may change what it generates.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc.Raw, 0o600); err != nil {
		t.Fatal(err)
	}
	runTS(t, dir, nil, nil, gen, "openapi.json", "--output", "schema.gen.ts",
		"--root-types", "--root-types-no-schema-prefix")
	fresh, err := os.ReadFile(filepath.Join(dir, "schema.gen.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(tsSchema, fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if have, _ := os.ReadFile(tsSchema); !bytes.Equal(have, fresh) {
		t.Fatalf("sdk/%s is stale against the served document (%d bytes, regenerated %d): run make sdk",
			tsSchema, len(have), len(fresh))
	}
}
