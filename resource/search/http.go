package search

import (
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/facet"
)

// Resource registers the search operation. It owns no table and no scope:
// it reads every registered source (Catalog.Search) that the caller's scopes
// admit.
func Resource() api.Resource {
	return api.Resource{
		Name:       "search",
		TagDoc:     "Search across projects, tasks, risks, notes, action items and analyses, best first.",
		Operations: func(cat api.Catalog) []api.Operation { return handlers{sources: cat.Search}.operations() },
	}
}

// Query documents and decodes the search parameters.
type Query struct {
	Q            string     `query:"q" required:"true" doc:"Words to find; partial words and small typos match too"`
	Types        string     `query:"types" doc:"Comma-separated types to search (project, task, risk, note, ...); default every type the key can read"`
	Limit        int        `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"At most this many items, 1 to 200; default 50"`
	Cursor       string     `query:"cursor" doc:"nextCursor of the previous page (of the same search)"`
	ProjectID    *uuid.UUID `query:"projectId" id:"project" doc:"Only this project and what belongs to it (prj_...)"`
	Status       string     `query:"status" doc:"Only items in this status (a status of a searched type); types without a status (project, note, rrca) are then not searched"`
	UpdatedSince *time.Time `query:"updatedSince" doc:"Only items changed at or after this time (RFC 3339 or a date)"`
}

type handlers struct{ sources []facet.Search }

func (h handlers) operations() []api.Operation {
	return []api.Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/resource/search", ID: "search",
		Tag: "Search", Auth: api.AuthKey, ScopeInHandler: true,
		Summary: "Search projects, tasks, risks, notes and more, best first; " +
			"needs the read scope of every type searched",
		Query: Query{}, Result: Results{}, Status: http.StatusOK, Handler: h.search,
	}}
}

func (h handlers) search(c *fiber.Ctx) error {
	q, err := ValidQuery(c.Query("q"))
	if err != nil {
		return err
	}
	params, err := api.DecodeQuery[Query](c)
	if err != nil {
		return err
	}
	p := api.Principal(c)
	chosen, err := Choose(h.sources, params.Types, func(scope string) bool { return p.Scopes.Has(authz.Scope(scope)) })
	if err != nil {
		return err
	}
	if err := ValidStatus(chosen, params.Status); err != nil {
		return err
	}
	f := Filter{ProjectID: params.ProjectID, Status: params.Status, UpdatedSince: params.UpdatedSince}
	after, err := api.DecodeCursor(cursorList, params.Cursor)
	if err != nil {
		return err
	}
	if after != "" {
		if f.After, err = ParseKey(after); err != nil {
			return err
		}
	}
	items, next, err := Run(c.UserContext(), p.Shard, p.Workspace.ID, q, chosen, f, params.Limit)
	if err != nil {
		return err
	}
	res := Results{Items: items}
	if next != nil {
		cur := api.EncodeCursor(cursorList, next.String())
		res.NextCursor = &cur
	}
	return api.OK(c, res)
}

// Choose picks the sources a search reads: those named in types (a comma
// list), or with types empty every source the caller can read. A type the
// caller cannot read is refused outright rather than silently answered with
// fewer types; so is an unknown one.
func Choose(all []facet.Search, types string, canRead func(scope string) bool) ([]facet.Search, error) {
	var chosen []facet.Search
	if types == "" {
		for _, src := range all {
			if canRead(src.Scope) {
				chosen = append(chosen, src)
			}
		}
		if len(chosen) == 0 {
			return nil, pmapi.Errorf(pmapi.CodeInsufficientScope, "the key can read no searchable type").
				With("scope", all[0].Scope)
		}
		return chosen, nil
	}
	byType := map[string]facet.Search{}
	var known []string
	for _, src := range all {
		byType[src.Type] = src
		known = append(known, src.Type)
	}
	seen := map[string]bool{}
	for _, t := range strings.Split(types, ",") {
		t = strings.TrimSpace(t)
		src, ok := byType[t]
		if !ok {
			return nil, pmapi.Invalid("types", "unknown type %q; types are %s", t, strings.Join(known, ", ")).
				With("allowed", known)
		}
		if !canRead(src.Scope) {
			return nil, pmapi.Errorf(pmapi.CodeInsufficientScope, "searching %s needs the %s scope", t, src.Scope).
				With("scope", src.Scope)
		}
		if !seen[t] {
			seen[t] = true
			chosen = append(chosen, src)
		}
	}
	return chosen, nil
}
