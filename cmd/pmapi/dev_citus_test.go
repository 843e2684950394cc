package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pmapi/pmapi/internal/pgcluster"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
)

// TestDevOnCitusServesWhatItPrints runs `pmapi dev --citus --ephemeral` on the
// package's Citus coordinator (make test-citus): the banner names the cluster's
// nodes, the dev database's tenant tables are distributed, and the printed key
// reads the seeded content, which only works when the server binds its
// transactions with SET LOCAL (set_config would not reach the workers). The
// three-node launch itself is internal/pgcluster's test.
func TestDevOnCitusServesWhatItPrints(t *testing.T) {
	if err := pgcluster.CitusAvailable(); err != nil {
		t.Skip("Citus is not installed here (../shared/citus/install.sh installs it):", err)
	}
	ctx := context.Background()
	top, err := pgcluster.Discover(ctx, testdb.AdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if !top.Citus {
		t.Skip("runs under make test-citus: the package's database is plain PostgreSQL")
	}
	t.Setenv("PMAPI_DATABASE_URL", testdb.AdminURL(t))
	t.Setenv("PMAPI_ADMIN_TOKEN", "")
	// dev chooses the mode itself on Citus.
	t.Setenv("PMAPI_TENANT_SETTING", "")
	runCtx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	early := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		err := runDev(runCtx, []string{"--citus", "--ephemeral", "--addr", "127.0.0.1:0"}, pw)
		pw.Close()
		early <- err
		exited <- err
	}()
	defer func() {
		cancel()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("dev returned %v after cancel", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("dev did not stop within 60s of cancel")
		}
	}()
	banner := readBanner(t, pr, early)
	go io.Copy(io.Discard, pr)

	nodes := regexp.MustCompile(`on Citus\s+coordinator (\S+), workers (\S+), (\S+)\n`).FindStringSubmatch(banner)
	if nodes == nil || strings.Join(nodes[1:], " ") != strings.Join(top.Addresses(), " ") {
		t.Errorf("banner's Citus nodes %v, want %v:\n%s", nodes, top.Addresses(), banner)
	}

	// The dev database is the newest pmapi_dev_ one; its tables are placed by
	// the migrations as on any Citus database.
	admin := testdb.Conn(t, testdb.AdminURL(t))
	var dbName string
	err = admin.QueryRow(ctx,
		"select datname from pg_database where datname like 'pmapi_dev_%' order by oid desc limit 1",
	).Scan(&dbName)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := pgcluster.Describe(testdb.AdminURL(t), dbName)
	if err != nil {
		t.Fatal(err)
	}
	var distributed bool
	err = testdb.Conn(t, dev.AdminURL).
		QueryRow(ctx, "select exists(select 1 from pg_dist_partition "+
			"where logicalrelid = 'tasks'::regclass and partmethod = 'h')").
		Scan(&distributed)
	if err != nil || !distributed {
		t.Errorf("tasks in the dev database is not hash-distributed (%v)", err)
	}

	vars := bannerVars(t, banner)
	base, appID, apiKey := vars["BASE"], vars["CLIENT_ID"], vars["API_KEY"]
	for path, want := range map[string]int{"project/list": 2, "task/list": 5} {
		req, _ := http.NewRequest("GET", base+"/openapi/v1/resource/"+path, nil)
		req.Header.Set("X-Client-ID", appID)
		req.Header.Set("Authorization", apiKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Data struct {
				Items []any `json:"items"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || len(body.Data.Items) != want {
			t.Errorf(
				"seeded %s through the printed key: %d, %d items (%v), want %d",
				path,
				resp.StatusCode,
				len(body.Data.Items),
				err,
				want,
			)
		}
	}
}
