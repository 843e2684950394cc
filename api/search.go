package api

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/search"
	"github.com/pmapi/pmapi/resource/task"
)

// searchSources is every searchable type, in the order types are documented.
func searchSources() []search.Source {
	return []search.Source{project.SearchSource, task.SearchSource, risk.SearchSource, note.SearchSource, actionitem.SearchSource, rrca.SearchSource}
}

// SearchQuery documents the search parameters.
type SearchQuery struct {
	Q     string `query:"q" required:"true" doc:"Words to find; partial words and small typos match too"`
	Types string `query:"types" doc:"Comma-separated types to search (project, task, risk, note, ...); default every type the key can read"`
	Limit int    `query:"limit" doc:"At most this many items, 1 to 200; default 50"`
}

func (s *Server) searchOperations() []Operation {
	return []Operation{{
		Method: http.MethodGet, Path: "/openapi/v1/resource/search", ID: "search", Tag: "Search", Auth: AuthKey, ScopeInHandler: true,
		Summary: "Search projects, tasks, risks, notes and more, best first; needs the read scope of every type searched",
		Query:   SearchQuery{}, Result: search.Results{}, Status: http.StatusOK, Handler: s.search,
	}}
}

func (s *Server) search(c *fiber.Ctx) error {
	q, err := search.ValidQuery(c.Query("q"))
	if err != nil {
		return err
	}
	limit, err := queryLimit(c)
	if err != nil {
		return err
	}
	p := principalOf(c)
	all := searchSources()
	var chosen []search.Source
	if raw := c.Query("types"); raw != "" {
		byType := map[string]search.Source{}
		var known []string
		for _, src := range all {
			byType[src.Type] = src
			known = append(known, src.Type)
		}
		seen := map[string]bool{}
		for _, t := range strings.Split(raw, ",") {
			t = strings.TrimSpace(t)
			src, ok := byType[t]
			if !ok {
				return pmapi.Invalid("types", "unknown type %q; types are %s", t, strings.Join(known, ", ")).With("allowed", known)
			}
			// Asking for a type the key cannot read is refused outright rather
			// than silently answered with fewer types.
			if !p.Scopes.Has(authz.Scope(src.Scope)) {
				return pmapi.Errorf(pmapi.CodeInsufficientScope, "searching %s needs the %s scope", t, src.Scope).With("scope", src.Scope)
			}
			if !seen[t] {
				seen[t] = true
				chosen = append(chosen, src)
			}
		}
	} else {
		for _, src := range all {
			if p.Scopes.Has(authz.Scope(src.Scope)) {
				chosen = append(chosen, src)
			}
		}
		if len(chosen) == 0 {
			return pmapi.Errorf(pmapi.CodeInsufficientScope, "the key can read no searchable type").With("scope", all[0].Scope)
		}
	}
	items, err := search.Run(c.UserContext(), p.Shard, p.Workspace.ID, q, chosen, limit)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, search.Results{Items: items})
}
