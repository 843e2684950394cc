package api

import (
	"bufio"
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/audit"
	"github.com/pmapi/pmapi/tenant"
	"github.com/pmapi/pmapi/tenant/workspacedata"
)

// ErasureView is a workspace's erasure under way (docs/decisions/workspace-lifecycle.md).
type ErasureView struct {
	State       string    `json:"state" enum:"QUEUED,RUNNING,RETRYING" enumName:"ErasureState" doc:"QUEUED until the job starts; RETRYING after a run that failed, until the next succeeds or gets further"`
	TablesDone  int       `json:"tablesDone" doc:"Tables holding the workspace's rows that the job has emptied"`
	TablesTotal int       `json:"tablesTotal" doc:"Tables holding the workspace's rows on its shard; 0 until the job starts"`
	StartedAt   time.Time `json:"startedAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	LastError   *string   `json:"lastError" doc:"Why the job's last run stopped; null while it goes well"`
}

// ExportLine is one line of a workspace's export: a row of a table, or, as
// the last line of an export that failed halfway, the error.
type ExportLine struct {
	Table string         `json:"table,omitempty" doc:"The table the row is from"`
	Row   map[string]any `json:"row,omitempty" doc:"The row as stored: column names, bytea as \\x hex (hashes, sealed secrets)"`
	Error *ExportError   `json:"error,omitempty" doc:"Only on the last line of an export that failed: it is incomplete"`
}

// ExportError is why an export stopped after its first line.
type ExportError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func erasureView(e *workspacedata.Erasure) *ErasureView {
	if e == nil {
		return nil
	}
	return &ErasureView{State: e.State(), TablesDone: e.TablesDone, TablesTotal: e.TablesTotal,
		StartedAt: e.StartedAt, UpdatedAt: e.UpdatedAt, LastError: e.LastError}
}

// exportTimeout bounds an export's read: its snapshot holds back vacuum on the
// workspace's node while it lasts.
const exportTimeout = time.Hour

func (s *Server) adminLifecycleOperations() []Operation {
	const tag = "Operator admin"
	return []Operation{
		{
			Method:  http.MethodGet,
			Path:    "/admin/v1/workspaces/{workspaceId}/export",
			ID:      "adminExportWorkspace",
			Fails:   []pmapi.Code{pmapi.CodeConflict},
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Export every row of a workspace as NDJSON",
			Description: "Streams application/x-ndjson, one line per row: " +
				"`{\"table\": \"...\", \"row\": {...}}`, the workspace's directory row first, then every table " +
				"that holds its rows (found from the database's catalog), parents before children, rows in key " +
				"order, all from one snapshot. Secrets appear as stored: hashes and sealed values. " +
				"An export that fails after its first line ends with `{\"error\": {...}}`. " +
				"A workspace being erased answers 409 CONFLICT.",
			Raw:       true,
			MediaType: "application/x-ndjson",
			Result:    ExportLine{},
			Status:    http.StatusOK,
			Handler:   s.adminExportWorkspace,
		},
		{
			Method:  http.MethodDelete,
			Path:    "/admin/v1/workspaces/{workspaceId}",
			ID:      "adminEraseWorkspace",
			Tag:     tag,
			Auth:    AuthAdmin,
			Summary: "Erase a workspace and every row of it",
			Description: "Answers 202 at once: the workspace is suspended and its client ids deleted, so every " +
				"credential of it is refused (401) from then on, and a job deletes every row of every table " +
				"that holds its rows, its jobs and its directory entries, then the workspace itself " +
				"(GET answers 404 from then on). GET shows the progress in `erasure` until then. " +
				"Asking again while it runs changes nothing.",
			Result:  WorkspaceView{},
			Status:  http.StatusAccepted,
			Handler: s.adminEraseWorkspace,
		},
	}
}

// adminGetWorkspace is GET /admin/v1/workspaces/{id}: the workspace with its
// erasure, when one is under way.
func (s *Server) adminGetWorkspace(c *fiber.Ctx) error {
	w, err := s.pathWorkspace(c)
	if err != nil {
		return err
	}
	e, err := workspacedata.ErasureOf(c.UserContext(), s.Directory, w.ID)
	if err != nil {
		return err
	}
	v := workspaceView(w)
	v.Erasure = erasureView(e)
	return respond(c, http.StatusOK, v)
}

func (s *Server) adminEraseWorkspace(c *fiber.Ctx) error {
	w, err := s.pathWorkspace(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	// Suspended first: the admin API then refuses new users and sessions in
	// it (403 WORKSPACE_SUSPENDED) while the job runs.
	var e *workspacedata.Erasure
	err = s.auditedDirectoryChange(ctx, w.ID, audit.WorkspaceErased, func(ctx context.Context) error {
		if w.Status != tenant.StatusSuspended {
			if w, err = s.Directory.SetStatus(ctx, w.ID, tenant.StatusSuspended); err != nil {
				return err
			}
		}
		e, err = workspacedata.Start(ctx, s.Directory, w.ID)
		return err
	})
	if err != nil {
		return err
	}
	// This instance drops its cached credentials now; the others when the
	// invalidation Start sent reaches them.
	if s.Auth != nil {
		s.Auth.Invalidate(tenant.WorkspaceChanged(w.ID))
	}
	v := workspaceView(w)
	v.Erasure = erasureView(e)
	return respond(c, http.StatusAccepted, v)
}

func (s *Server) adminExportWorkspace(c *fiber.Ctx) error {
	id, err := parseUUIDParam(c, "workspaceId", "workspace")
	if err != nil {
		return err
	}
	export, err := workspacedata.NewExport(c.UserContext(), s.Directory, id)
	if err != nil {
		return err
	}
	// The stream is written after the handler returns, when c is no longer
	// this request's: what it needs is taken now.
	log, rid := s.Log, requestID(c)
	c.Status(http.StatusOK)
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="workspace-`+id.String()+`.ndjson"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		defer cancel()
		rows, err := export.WriteTo(ctx, w)
		if err != nil {
			log.Error("workspace export failed", "requestId", rid, "workspaceId", id.String(),
				"rows", rows, "cause", err.Error())
		}
	})
	return nil
}
