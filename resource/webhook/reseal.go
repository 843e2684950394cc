package webhook

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/tenant"
)

// The sealed columns of webhook_subscriptions.
const (
	colSecret   = "secret_sealed"
	colPrevious = "previous_secret_sealed"
)

// secretAt binds a subscription's secret to its row and column: a secret
// copied to another subscription, workspace or column does not open.
func secretAt(ws, id uuid.UUID, column string) seal.Binding {
	return seal.Bind("webhook_subscriptions", column, ws.String(), id.String())
}

// resealBatch bounds one reseal transaction: it holds its rows' locks for a
// few milliseconds, so deliveries and rotations of them wait no longer.
const resealBatch = 100

// Reseal rewrites every subscription secret not yet sealed in the current
// form under box's current key, workspace by workspace, each in its own
// transactions under row-level security, so it runs beside serve and work.
// What is current is skipped, so an interrupted run continues where it
// stopped when run again.
func Reseal(ctx context.Context, dir *tenant.Directory, box *seal.Box) ([]seal.Report, error) {
	reports := []seal.Report{
		{Table: "webhook_subscriptions", Column: colSecret},
		{Table: "webhook_subscriptions", Column: colPrevious},
	}
	for _, shard := range dir.Shards().All() {
		workspaces, err := dir.WorkspacesOn(ctx, shard.Name)
		if err != nil {
			return reports, fmt.Errorf("shard %s: %w", shard.Name, err)
		}
		for _, ws := range workspaces {
			if err := resealWorkspace(ctx, shard, ws, box, reports); err != nil {
				return reports, fmt.Errorf("webhook secrets of workspace %s: %w", ws, err)
			}
		}
	}
	return reports, nil
}

func resealWorkspace(
	ctx context.Context,
	shard *tenant.Shard,
	ws uuid.UUID,
	box *seal.Box,
	reports []seal.Report,
) error {
	prefix := box.CurrentPrefix()
	var current, previous int
	err := shard.Read(ctx, ws, func(b *pgx.Batch) {
		b.Queue(`select count(*) filter (where substring(secret_sealed from 1 for 5) = $2),
			count(*) filter (where substring(previous_secret_sealed from 1 for 5) = $2)
			from webhook_subscriptions where workspace_id = $1`, ws, prefix).QueryRow(func(r pgx.Row) error {
			return r.Scan(&current, &previous)
		})
	})
	if err != nil {
		return err
	}
	reports[0].Current += current
	reports[1].Current += previous
	for after := uuid.Nil; ; {
		var batch []seal.Report
		var rows int
		err := shard.Tx(ctx, ws, func(tx pgx.Tx) error {
			batch = []seal.Report{{}, {}}
			var err error
			rows, after, err = resealPage(ctx, tx, ws, after, box, batch)
			return err
		})
		if err != nil {
			return err
		}
		for i := range reports {
			reports[i].Resealed += batch[i].Resealed
			reports[i].Failed = append(reports[i].Failed, batch[i].Failed...)
		}
		if rows < resealBatch {
			return nil
		}
	}
}

type sealedSecrets struct {
	id               uuid.UUID
	secret, previous []byte
}

// resealPage locks the next subscriptions after `after` that hold a value
// not under the current key, reseals them and answers how many it read and
// the last id. FOR NO KEY UPDATE, not FOR UPDATE: a fan-out inserting
// deliveries (whose foreign key takes KEY SHARE on the subscription) does not
// wait for it.
func resealPage(
	ctx context.Context,
	tx pgx.Tx,
	ws, after uuid.UUID,
	box *seal.Box,
	batch []seal.Report,
) (int, uuid.UUID, error) {
	rows, err := tx.Query(ctx, `select id, secret_sealed, previous_secret_sealed from webhook_subscriptions
		where workspace_id = $1 and id > $2
		and (substring(secret_sealed from 1 for 5) <> $3 or substring(previous_secret_sealed from 1 for 5) <> $3)
		order by id limit $4 for no key update`, ws, after, box.CurrentPrefix(), resealBatch)
	if err != nil {
		return 0, after, err
	}
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealedSecrets, error) {
		var s sealedSecrets
		return s, r.Scan(&s.id, &s.secret, &s.previous)
	})
	if err != nil {
		return 0, after, err
	}
	b := &pgx.Batch{}
	for _, s := range page {
		after = s.id
		secret := reseal(box, s.secret, ws, s.id, colSecret, &batch[0])
		previous := s.previous
		if previous != nil {
			previous = reseal(box, previous, ws, s.id, colPrevious, &batch[1])
		}
		b.Queue(
			`update webhook_subscriptions set secret_sealed = $3, previous_secret_sealed = $4
			where workspace_id = $1 and id = $2`,
			ws,
			s.id,
			secret,
			previous,
		)
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return 0, after, err
		}
	}
	return len(page), after, nil
}

// reseal answers sealed under the current key, or sealed itself when it is
// current already or opens under no key (then counted as failed).
func reseal(box *seal.Box, sealed []byte, ws, id uuid.UUID, column string, r *seal.Report) []byte {
	if box.Current(sealed) {
		return sealed
	}
	plain, err := box.Open(sealed, secretAt(ws, id, column))
	if err != nil {
		r.Failed = append(r.Failed, ws.String()+"/"+id.String())
		return sealed
	}
	r.Resealed++
	return box.Seal(plain, secretAt(ws, id, column))
}
