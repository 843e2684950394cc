package rrca

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/api"
)

// ifMatch holds a change of the analysis a (locked) to the request's
// If-Match: an analysis's detail GET shows its corrective actions and phase
// history too, so they are read, in the change's transaction, only when
// there is a tag to compare.
func (s Store) ifMatch(ctx context.Context, tx pgx.Tx, ws uuid.UUID, a Analysis) error {
	return api.IfMatchRead(ctx, a.ID, func() (any, error) { return s.detailTx(ctx, tx, ws, a) })
}

// detailTx is the detail GET's view of a (Detail), read inside tx.
func (s Store) detailTx(ctx context.Context, tx pgx.Tx, ws uuid.UUID, a Analysis) (any, error) {
	f := Full{Analysis: a}
	b := &pgx.Batch{}
	s.Sources.queueCorrective(b, ws, a.ID, &f.Correctives)
	queueHistory(b, ws, a.ID, &f.History)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return ToDetail(f), nil
}
