package authz

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/tenant"
)

// signingKeyAt binds a signing key's sealed private half to its row: a value
// copied to another key's row does not open.
func signingKeyAt(kid string) seal.Binding {
	return seal.Bind("oauth_signing_keys", "private_sealed", kid)
}

// Reseal rewrites every OAuth signing key's private half not yet sealed in
// the current form under box's current key, retired keys included, so none is
// left that only a previous key opens. Each key is one compare-and-set
// UPDATE, no lock held between read and write: a key the statement finds
// changed meanwhile is left for the next run. The keys are server-wide, in the
// directory (a reference table on Citus).
func Reseal(ctx context.Context, dir *tenant.Directory, box *seal.Box) ([]seal.Report, error) {
	r := seal.Report{Table: "oauth_signing_keys", Column: "private_sealed"}
	prefix := box.CurrentPrefix()
	if err := dir.Pool().QueryRow(ctx, `select count(*) from oauth_signing_keys
		where substring(private_sealed from 1 for 5) = $1`, prefix).Scan(&r.Current); err != nil {
		return []seal.Report{r}, err
	}
	rows, err := dir.Pool().Query(ctx, `select kid, private_sealed from oauth_signing_keys
		where substring(private_sealed from 1 for 5) <> $1 order by kid`, prefix)
	if err != nil {
		return []seal.Report{r}, err
	}
	type stale struct {
		kid    string
		sealed []byte
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (stale, error) {
		var s stale
		return s, row.Scan(&s.kid, &s.sealed)
	})
	if err != nil {
		return []seal.Report{r}, err
	}
	for _, s := range keys {
		der, err := box.Open(s.sealed, signingKeyAt(s.kid))
		if err != nil {
			r.Failed = append(r.Failed, s.kid)
			continue
		}
		tag, err := dir.Pool().
			Exec(ctx, `update oauth_signing_keys set private_sealed = $2 where kid = $1 and private_sealed = $3`,
				s.kid, box.Seal(der, signingKeyAt(s.kid)), s.sealed)
		if err != nil {
			return []seal.Report{r}, err
		}
		r.Resealed += int(tag.RowsAffected())
	}
	return []seal.Report{r}, nil
}
