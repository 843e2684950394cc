package pgcluster

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPersistentClusterIsExclusiveAndKeepsData starts a private cluster in a data
// directory, shows a second start beside it is refused (as a second `pmapi dev`
// would be), and that a restart finds the data written before.
func TestPersistentClusterIsExclusiveAndKeepsData(t *testing.T) {
	bin := serverBinaries(t)
	ctx := context.Background()
	dir := serverReadableTempDir(t)
	opts := Options{DataDir: dir}
	srv, err := startLocal(ctx, bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	runSQL(t, srv.AdminURL, "create table kept (v text); insert into kept values ('still here')")

	if _, err := startLocal(ctx, bin, opts); err == nil || !strings.Contains(err.Error(), "another pmapi") {
		t.Fatalf("second start on the same directory: %v, want a refusal naming the other pmapi", err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	again, err := startLocal(ctx, bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Stop(ctx)
	if v, err := kept(again.AdminURL); err != nil || v != "still here" {
		t.Fatalf("after restart: %q, %v", v, err)
	}
}

// kept is the value a restart test wrote into its table kept before the
// restart.
func kept(url string) (string, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var v string
	err = conn.QueryRow(ctx, "select v from kept").Scan(&v)
	return v, err
}

func runSQL(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

func TestStartUsesGivenURL(t *testing.T) {
	srv, err := Start(context.Background(), Options{URL: "postgres://x@127.0.0.1:1/db"})
	if err != nil || srv.Source != "url" || srv.AdminURL != "postgres://x@127.0.0.1:1/db" {
		t.Fatalf("got %+v, %v", srv, err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Errorf("stopping a given server must do nothing: %v", err)
	}
}

func TestDescribeDerivesStableRoleURLs(t *testing.T) {
	a, err := Describe("postgres://postgres:pw@127.0.0.1:5432/postgres?sslmode=disable", "pmapi")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Describe("postgres://postgres:pw@127.0.0.1:5432/postgres?sslmode=disable", "pmapi")
	if a != b {
		t.Error("role URLs differ between two derivations from the same admin URL")
	}
	if !strings.HasPrefix(a.AppURL, "postgres://pmapi_app:") || !strings.Contains(a.AppURL, "/pmapi?") {
		t.Errorf("app URL %s", a.AppURL)
	}
	if !strings.HasPrefix(a.OwnerURL, "postgres://pmapi_owner:") {
		t.Errorf("owner URL %s", a.OwnerURL)
	}
	if _, err := CreateDatabase(context.Background(), "postgres://x@127.0.0.1:1/db", "Bad-Name", ""); err == nil {
		t.Error("a database name with capitals and dashes was accepted")
	}
}
