package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/authz"
)

func TestKeyCheck(t *testing.T) {
	good := authz.NewAPIKey()
	var out bytes.Buffer
	if err := runKeyCheck([]string{good}, &out); err != nil || !strings.Contains(out.String(), "valid") {
		t.Fatalf("good key: %v %q", err, out.String())
	}
	if strings.Contains(out.String(), good) {
		t.Error("key-check printed the whole key")
	}
	out.Reset()
	bad := good[:len(good)-1] + "x"
	if good[len(good)-1] == 'x' {
		bad = good[:len(good)-1] + "y"
	}
	if err := runKeyCheck([]string{bad}, &out); err == nil || !strings.Contains(out.String(), "not a pmapi key") {
		t.Fatalf("bad key: %v %q", err, out.String())
	}
	// The same check as `pmapi admin key-check`, still without a database.
	t.Setenv("PMAPI_DATABASE_URL", "")
	out.Reset()
	if err := runAdmin(context.Background(), []string{"key-check", good}, &out); err != nil ||
		!strings.Contains(out.String(), "valid") {
		t.Fatalf("admin key-check, good key: %v %q", err, out.String())
	}
	out.Reset()
	if err := runAdmin(context.Background(), []string{"key-check", bad}, &out); err == nil ||
		!strings.Contains(out.String(), "not a pmapi key") {
		t.Fatalf("admin key-check, bad key: %v %q", err, out.String())
	}
}
