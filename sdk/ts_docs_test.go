package pmapisdk_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTypeScriptDocSnippetsCompile type-checks the TypeScript blocks of the
// guides against the SDK and the pinned packages, so a renamed path, field or
// function fails here before a reader meets it. The blocks of one guide are one
// module, each block going on from the ones above it, as a reader's would;
// "@pmapi/sdk" is the SDK's source.
func TestTypeScriptDocSnippetsCompile(t *testing.T) {
	t.Parallel()
	tsc := tsBin(t, "tsc")
	root, err := filepath.Abs(tsDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	block := regexp.MustCompile("(?s)```ts\n(.*?)```")
	var files []string
	for _, guide := range []string{"sdk.md", "webhooks.md"} {
		text, err := os.ReadFile(filepath.Join("..", "docs", guide))
		if err != nil {
			t.Fatal(err)
		}
		var code []string
		for _, m := range block.FindAllStringSubmatch(string(text), -1) {
			code = append(code, strings.ReplaceAll(m[1], `"@pmapi/sdk"`, `"`+root+`/src/index.js"`))
		}
		if len(code) == 0 {
			t.Fatalf("docs/%s has no TypeScript block", guide)
		}
		name := filepath.Join(dir, guide+".ts")
		if err := os.WriteFile(name, []byte(strings.Join(code, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	// The SDK's options, but a snippet may leave a name unused; the
	// directory gets the SDK's packages and ES modules as a reader's would.
	config, err := json.Marshal(map[string]any{
		"extends":         filepath.Join(root, "tsconfig.json"),
		"compilerOptions": map[string]any{"noEmit": true, "noUnusedLocals": false, "rootDir": "/"},
		"files":           files,
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tsconfig.json": config, "package.json": []byte(`{"type": "module"}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	runTS(t, dir, nil, nil, tsc, "--project", "tsconfig.json")
}
