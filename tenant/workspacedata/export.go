package workspacedata

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/tenant"
)

// WorkspacesTable is the directory's table of workspaces: its row of the
// workspace is the export's first line and the erasure's last delete.
const WorkspacesTable = "workspaces"

// Export is a workspace's export, checked and ready to be written.
type Export struct {
	dir     *tenant.Directory
	ws      tenant.Workspace
	shard   *tenant.Shard
	catalog Catalog
}

// NewExport checks that workspace id exists and is not being erased, and reads
// the catalog, so that what can fail before the first line fails with its own
// error (404, 409) rather than in the middle of a stream.
func NewExport(ctx context.Context, dir *tenant.Directory, id uuid.UUID) (*Export, error) {
	w, err := dir.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if e, err := ErasureOf(ctx, dir, id); err != nil {
		return nil, err
	} else if e != nil {
		return nil, pmapi.Errorf(pmapi.CodeConflict, "the workspace is being erased; there is nothing left to export")
	}
	shard, err := dir.ShardOf(w)
	if err != nil {
		return nil, err
	}
	catalog, err := ReadCatalog(ctx, shard.Pool)
	if err != nil {
		return nil, err
	}
	return &Export{dir: dir, ws: w, shard: shard, catalog: catalog}, nil
}

// WriteTo writes the workspace's rows to w, one line each:
// {"table": "...", "row": {...}}, the row as PostgreSQL's row_to_json has it
// (bytea as \x hex, so hashes and sealed secrets appear as stored). The tenant
// tables are read in one read-only REPEATABLE READ transaction on the node
// that holds the workspace, so they agree with each other. The directory's
// rows are read in that same snapshot when the workspace lives beside the
// directory (a single shard, and Citus, whose reference tables have a copy on
// every node); on another shard, in a snapshot of the directory's own.
//
// Should a read fail after the first line, the last line is
// {"error": {"code": ..., "message": ...}} and the export is incomplete.
func (e *Export) WriteTo(ctx context.Context, w io.Writer) (rows int64, err error) {
	out := bufio.NewWriterSize(w, 64<<10)
	defer func() {
		if err != nil {
			writeError(out, err)
		}
		if ferr := out.Flush(); err == nil {
			err = ferr
		}
	}()
	directory := append(Catalog{{Name: WorkspacesTable}}, e.catalog.Directory()...)
	home := e.dir.Shards().Default
	if e.shard == home {
		err = e.shard.Snapshot(ctx, e.ws.ID, func(tx pgx.Tx) error {
			return writeTables(ctx, tx, e.ws.ID, append(directory, e.catalog.Tenant()...), out, &rows)
		})
		return rows, err
	}
	err = home.Snapshot(ctx, e.ws.ID, func(tx pgx.Tx) error {
		return writeTables(ctx, tx, e.ws.ID, directory, out, &rows)
	})
	if err != nil {
		return rows, err
	}
	err = e.shard.Snapshot(ctx, e.ws.ID, func(tx pgx.Tx) error {
		return writeTables(ctx, tx, e.ws.ID, e.catalog.Tenant(), out, &rows)
	})
	return rows, err
}

// selectRows reads a table's rows of the workspace as JSON text, in key order.
func selectRows(t Table) string {
	if t.Name == WorkspacesTable {
		return "select row_to_json(t)::text from workspaces t where t.id = $1"
	}
	sql := "select row_to_json(t)::text from " + t.ident() + " t where t.workspace_id = $1"
	if len(t.Key) > 0 {
		cols := make([]string, len(t.Key))
		for i, k := range t.Key {
			cols[i] = "t." + pgx.Identifier{k}.Sanitize()
		}
		sql += " order by " + strings.Join(cols, ", ")
	}
	return sql
}

func writeTables(ctx context.Context, tx pgx.Tx, ws uuid.UUID, tables Catalog, out *bufio.Writer, n *int64) error {
	for _, t := range tables {
		name, _ := json.Marshal(t.Name)
		rows, err := tx.Query(ctx, selectRows(t), ws)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		for rows.Next() {
			// The raw text of the one column: row_to_json's output, written
			// as it came rather than decoded and encoded again.
			raw := rows.RawValues()[0]
			out.WriteString(`{"table":`)
			out.Write(name)
			out.WriteString(`,"row":`)
			out.Write(raw)
			out.WriteString("}\n")
			*n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}

// writeError ends a failed export with a line that says so; the cause stays
// in the server's log.
func writeError(out *bufio.Writer, err error) {
	code, msg := pmapi.CodeInternal, "the export failed; it is incomplete"
	var e *pmapi.Error
	if errors.As(err, &e) && e.Code != pmapi.CodeInternal {
		code, msg = e.Code, e.Message
	}
	line, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg}})
	out.Write(line)
	out.WriteByte('\n')
}
