package api

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/facet"
)

// Resource is everything one resource brings to the server, in one value: its
// scopes, its tenant tables, the events it emits, how search and a project
// delete reach it, and its operations. cmd/pmapi hands New the list
// (resource/registry), so the core imports no resource package and adding a
// resource adds one line there (docs/architecture.md).
type Resource struct {
	// Name is the resource's name, e.g. "task".
	Name string
	// Scopes are the scopes it introduces, read first; their order across the
	// list is the canonical order of scope lists (authz.DefineScopes).
	Scopes []string
	// Tables are the tenant tables it owns: row-level security, a Citus class
	// and its SQL are its own (tests hold every registered table to that).
	Tables []string
	// Events are the events it emits with their payload types.
	Events []event.Type
	// Search makes its rows findable by the search operation.
	Search []facet.Search
	// Cascade, when set, says how a project delete removes its rows.
	Cascade *facet.Cascade
	// AppInUse, when set, keeps an app with something active of this resource
	// from being deleted (it is disabled instead).
	AppInUse authz.AppInUse
	// QuotaUse, when set, counts the rows of this resource a quota limits,
	// for GET /admin/v1/workspaces/{id}/quotas.
	QuotaUse *QuotaUse
	// TagDoc describes, in the document, the tag of its operations.
	TagDoc string
	// Operations builds its routes once every registration is known: some
	// need the whole catalog (search every source, a project delete every
	// cascade, a subscription every event type).
	Operations func(Catalog) []Operation
}

// Catalog is what the registrations declare, gathered: the second phase of
// building the server hands it to every resource's Operations.
type Catalog struct {
	Scopes   []string
	Events   []event.Type // sorted by name
	Search   []facet.Search
	Cascade  []facet.Cascade
	AppInUse []authz.AppInUse
	QuotaUse []QuotaUse
	// TagDocs describes the tags of the resources' operations (TagDoc).
	TagDocs map[string]string
	// ReadScopes maps each event type to the read scope of the resource that
	// declares it (its scope ending in ":read"; none when it has none): the
	// event feed lists an event only to a credential that may read its
	// resource.
	ReadScopes map[string]string
}

// catalogOf gathers the registrations, refusing a name, scope, table or event
// type declared twice.
func catalogOf(resources []Resource) (Catalog, error) {
	c := Catalog{ReadScopes: map[string]string{}}
	seen := map[string]string{}
	claim := func(kind, name, by string) error {
		key := kind + " " + name
		if other, ok := seen[key]; ok {
			return fmt.Errorf("api: %s %q is declared by both %s and %s", kind, name, other, by)
		}
		seen[key] = by
		return nil
	}
	for _, r := range resources {
		if err := claim("resource", r.Name, r.Name); err != nil {
			return c, err
		}
		for _, s := range r.Scopes {
			if err := claim("scope", s, r.Name); err != nil {
				return c, err
			}
			c.Scopes = append(c.Scopes, s)
		}
		for _, t := range r.Tables {
			if err := claim("table", t, r.Name); err != nil {
				return c, err
			}
		}
		for _, e := range r.Events {
			if err := claim("event type", e.Name, r.Name); err != nil {
				return c, err
			}
			c.Events = append(c.Events, e)
			c.ReadScopes[e.Name] = readScope(r.Scopes)
		}
		c.Search = append(c.Search, r.Search...)
		if r.Cascade != nil {
			c.Cascade = append(c.Cascade, *r.Cascade)
		}
		if r.AppInUse != nil {
			c.AppInUse = append(c.AppInUse, r.AppInUse)
		}
		if r.QuotaUse != nil {
			c.QuotaUse = append(c.QuotaUse, *r.QuotaUse)
		}
	}
	sort.Slice(c.Events, func(i, j int) bool { return c.Events[i].Name < c.Events[j].Name })
	return c, nil
}

// readScope is the read scope among a registration's scopes.
func readScope(scopes []string) string {
	for _, s := range scopes {
		if strings.HasSuffix(s, ":read") {
			return s
		}
	}
	return ""
}

// checkScopes fails start-up on a scope no registration declares: a misspelt
// scope in a route table or a search source.
func (c Catalog) checkScopes(ops []Operation) error {
	known := map[string]bool{}
	for _, s := range c.Scopes {
		known[s] = true
	}
	for _, op := range ops {
		if op.Scope != "" && !known[op.Scope] {
			return fmt.Errorf("api: operation %s needs scope %q, which no resource declares", op.ID, op.Scope)
		}
	}
	for _, s := range c.Search {
		if !known[s.Scope] {
			return fmt.Errorf("api: search type %s needs scope %q, which no resource declares", s.Type, s.Scope)
		}
	}
	return nil
}
