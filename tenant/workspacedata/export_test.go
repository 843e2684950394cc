package workspacedata

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi/tenant"
)

// ErrStopped is what EraseStoppingAfter's run stops with.
var ErrStopped = errors.New("stopped halfway on purpose")

// EraseStoppingAfter runs an erasure that stops, as a killed worker would,
// once it has emptied n tables.
func EraseStoppingAfter(ctx context.Context, dir *tenant.Directory, id uuid.UUID, n int) error {
	return eraser{dir: dir, afterTable: func(done int) error {
		if done >= n {
			return ErrStopped
		}
		return nil
	}}.run(ctx, id)
}
