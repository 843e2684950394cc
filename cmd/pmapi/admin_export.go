package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

// exportWorkspace is `pmapi admin workspace export ID`: the operation's own
// code (workspacedata) writing straight to out, since an answer through the
// in-process app (callAdmin) would be held whole in memory, and an export
// can be large. path is the operation's, as adminRequest made it.
func exportWorkspace(ctx context.Context, dir *tenant.Directory, path string, out io.Writer) error {
	raw := strings.TrimSuffix(strings.TrimPrefix(path, "/admin/v1/workspaces/"), "/export")
	id, err := uuid.Parse(raw)
	if err != nil {
		return pmapi.NotFound("workspace")
	}
	export, err := workspacedata.NewExport(ctx, dir, id)
	if err != nil {
		return err
	}
	rows, err := export.WriteTo(ctx, out)
	if err != nil {
		return fmt.Errorf("the export stopped after %d rows: %w", rows, err)
	}
	return nil
}
