// Package route says once what every operation of a resource shares: its tag,
// its path base, its credentials (a key, or the console session), and which of
// its two scopes and which success status a method implies. Each operation then states only what is its
// own (path, id, summary, types, handler, and an exception where it has one).
package route

import (
	"net/http"
	"strings"

	"github.com/pmapi/pmapi/api"
)

// Set is one resource's operations.
type Set struct {
	Name string // the resource's registered name: "task"
	Tag  string // the document's tag: "Tasks"
	Base string // the path every operation's Path continues: "/openapi/v1/resource/task/"
	// Read is the scope of its GETs, Write of every other method.
	Read, Write string
	// Session marks operations the console session calls (an app's webhook
	// subscriptions) rather than a key; they have no scope.
	Session bool
}

// For is the Set of a resource served the spec's way: its operations under
// /openapi/v1/resource/<name>/, its scopes <scopes>:read and <scopes>:write.
func For(name, scopes, tag string) Set {
	return Set{Name: name, Tag: tag, Base: "/openapi/v1/resource/" + name + "/",
		Read: scopes + ":read", Write: scopes + ":write"}
}

// PostAndPatch is the Method of an update the spec serves on POST and on
// PATCH alike: Ops makes it two operations, the POST with the operation's ID
// ("updateTask") and the PATCH with "patch" in place of "update"
// ("patchTask").
const PostAndPatch = "POST+PATCH"

// Resource completes a registration whose operations are all in s: its name
// and its scopes (read first) are s's, and the operations ops builds are
// completed by Ops.
func (s Set) Resource(r api.Resource, ops func(api.Catalog) []api.Operation) api.Resource {
	r.Name, r.Scopes = s.Name, []string{s.Read, s.Write}
	r.Operations = func(cat api.Catalog) []api.Operation { return s.Ops(ops(cat)) }
	return r
}

// Ops completes ops: each Path is read under Base, every operation carries
// the Tag and asks for a key (or with Session the console session; a
// resource's routes never answer no credentials), and an operation that names
// no Scope or Status gets the read scope and 200 for a GET, the write scope
// and 201 otherwise. A
// PostAndPatch operation stands as its two.
func (s Set) Ops(in []api.Operation) []api.Operation {
	ops := make([]api.Operation, 0, len(in)+1)
	for _, op := range in {
		if op.Method == PostAndPatch {
			patch := op
			op.Method, patch.Method = http.MethodPost, http.MethodPatch
			patch.ID = "patch" + strings.TrimPrefix(op.ID, "update")
			ops = append(ops, s.op(op), s.op(patch))
			continue
		}
		ops = append(ops, s.op(op))
	}
	return ops
}

func (s Set) op(op api.Operation) api.Operation {
	op.Path = s.Base + op.Path
	op.Tag, op.Auth = s.Tag, api.AuthKey
	if s.Session {
		op.Auth = api.AuthSession
	}
	scope, status := s.Write, http.StatusCreated
	if op.Method == http.MethodGet {
		scope, status = s.Read, http.StatusOK
	}
	if op.Scope == "" {
		op.Scope = scope
	}
	if op.Status == 0 {
		op.Status = status
	}
	return op
}
