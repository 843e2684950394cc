package webhook_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// legacySeal seals as pmapi did before key ids: a nonce and AES-GCM under the
// key's bytes, bound to nothing.
func legacySeal(t *testing.T, key, plain string) []byte {
	t.Helper()
	raw, _ := base64.StdEncoding.DecodeString(key)
	block, err := aes.NewCipher(raw)
	if err != nil {
		t.Fatal(err)
	}
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, []byte(plain), nil)
}

func secretAt(ws, id uuid.UUID, column string) seal.Binding {
	return seal.Bind("webhook_subscriptions", column, ws.String(), id.String())
}

// TestResealUpgradesEveryForm: 250 subscriptions (more than one batch) with
// secrets in the legacy form, in the current form under the old key, and with
// previous secrets, plus one whose secret was copied from another row. Reseal
// under a new key (the old one previous) rewrites every value but the copied
// one, which it names and leaves alone; a second run finds nothing to do; and
// afterwards the new key alone opens every secret.
//
// Reseal walks every workspace of the directory, so the test has a database
// of its own: the package's holds the route tests' subscriptions, sealed
// under another key.
func TestResealUpgradesEveryForm(t *testing.T) {
	ctx := context.Background()
	pool, err := tenant.Connect(ctx, testdb.ExtraDatabase(t).AppURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	shard := tenant.NewShard("default", pool, testdb.TenantSetting(t))
	shards, err := tenant.NewShards("default", shard)
	if err != nil {
		t.Fatal(err)
	}
	dir := tenant.NewDirectory(shards)
	w := testdb.Workspace(t, dir, "reseal", "default")
	ws := w.ID
	k1, k2 := seal.Random(), seal.Random()
	old, _ := seal.New(k1)
	const n = 250
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
	}
	secret := func(i int) string { return fmt.Sprintf("whsec_%03d", i) }
	for start := 0; start < n; start += 50 {
		var sql strings.Builder
		sql.WriteString(
			`insert into webhook_subscriptions (workspace_id, id, client_id, url, events, secret_sealed, secret_prefix,
			previous_secret_sealed, previous_valid_until) values `,
		)
		args := []any{ws}
		for i := start; i < start+50; i++ {
			cur := old.Seal(secret(i), secretAt(ws, ids[i], "secret_sealed"))
			if i%2 == 0 {
				cur = legacySeal(t, k1, secret(i))
			}
			var prev []byte
			if i%5 == 0 {
				prev = old.Seal("prev_"+secret(i), secretAt(ws, ids[i], "previous_secret_sealed"))
			}
			args = append(args, ids[i], cur, prev)
			if i > start {
				sql.WriteString(", ")
			}
			fmt.Fprintf(
				&sql,
				"($1, $%d, 'app', 'https://example.com/hook', '{*}', $%d, 'whsec_000000', $%d, now() + interval '1 hour')",
				len(args)-2,
				len(args)-1,
				len(args),
			)
		}
		if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql.String(), args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Row 1 gets row 3's sealed secret: it must not open there.
	copied := ids[1]
	if err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "update webhook_subscriptions set secret_sealed = $3 where workspace_id = $1 and id = $2",
			ws, copied, old.Seal(secret(3), secretAt(ws, ids[3], "secret_sealed")))
		return err
	}); err != nil {
		t.Fatal(err)
	}

	rotated, _ := seal.New(k2, k1)
	reports, err := webhook.Reseal(ctx, dir, rotated)
	if err != nil {
		t.Fatal(err)
	}
	wantFailed := []string{ws.String() + "/" + copied.String()}
	if r := reports[0]; r.Column != "secret_sealed" || r.Resealed != n-1 || r.Current != 0 ||
		!slices.Equal(r.Failed, wantFailed) {
		t.Errorf("first run, secrets: %+v", r)
	}
	if r := reports[1]; r.Column != "previous_secret_sealed" || r.Resealed != n/5 || len(r.Failed) != 0 {
		t.Errorf("first run, previous secrets: %+v", r)
	}
	again, err := webhook.Reseal(ctx, dir, rotated)
	if err != nil {
		t.Fatal(err)
	}
	if r := again[0]; r.Resealed != 0 || r.Current != n-1 || !slices.Equal(r.Failed, wantFailed) {
		t.Errorf("second run, secrets: %+v", r)
	}
	if r := again[1]; r.Resealed != 0 || r.Current != n/5 {
		t.Errorf("second run, previous secrets: %+v", r)
	}

	onlyNew, _ := seal.New(k2)
	store := webhook.Store{Box: onlyNew}
	for i, id := range ids {
		s, err := store.Get(ctx, shard, ws, "app", id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := store.Secrets(s, time.Now())
		if id == copied {
			if err == nil {
				t.Errorf("the copied secret opened: %v", got)
			}
			continue
		}
		want := []string{secret(i)}
		if i%5 == 0 {
			want = append(want, "prev_"+secret(i))
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("subscription %d under the new key alone: %v %v, want %v", i, got, err, want)
		}
	}
}
