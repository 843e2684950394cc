package pmapisdk_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

var update = flag.Bool("update", false, "write the regenerated client over client.gen.go (make sdk)")

// TestSDKIsFresh regenerates the client from the document the server serves,
// with the oapi-codegen version go.mod pins, and fails when client.gen.go
// differs: the checked-in SDK always matches the API.
func TestSDKIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds oapi-codegen; skipped with -short")
	}
	t.Parallel()
	env := apitest.Shared(t)
	doc := env.Do(t, apitest.Request{Method: "GET", Path: "/openapi/v1/openapi.json"})
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.json")
	config, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "client.gen.go")
	config = append(config, []byte("\noutput: "+out+"\n")...)
	config = bytes.Replace(config, []byte("output: client.gen.go\n"), nil, 1)
	cfg := filepath.Join(dir, "oapi-codegen.yaml")
	for name, data := range map[string][]byte{spec: doc.Raw, cfg: config} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := exec.Command("go", "tool", "oapi-codegen", "-config", cfg, spec).CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, b)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("client.gen.go", fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, _ := os.ReadFile("client.gen.go")
	if !bytes.Equal(have, fresh) {
		t.Fatalf(
			"sdk/client.gen.go is stale against the served document (%d bytes, regenerated %d): run make sdk",
			len(have),
			len(fresh),
		)
	}
}
