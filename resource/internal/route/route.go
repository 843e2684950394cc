// Package route says once what every operation of a resource shares: its tag,
// its path base, key credentials, and which of its two scopes and which
// success status a method implies. Each operation then states only what is its
// own (path, id, summary, types, handler, and an exception where it has one).
package route

import (
	"net/http"

	"github.com/pmapi/pmapi/api"
)

// Set is one resource's operations.
type Set struct {
	Tag  string // the document's tag: "Tasks"
	Base string // the path every operation's Path continues: "/openapi/v1/resource/task/"
	// Read is the scope of its GETs, Write of every other method.
	Read, Write string
}

// Ops completes ops: each Path is read under Base, every operation carries
// the Tag and asks for a key (a resource's routes never answer a session or
// no credentials), and an operation that names no Scope or Status gets the
// read scope and 200 for a GET, the write scope and 201 otherwise.
func (s Set) Ops(ops []api.Operation) []api.Operation {
	for i := range ops {
		op := &ops[i]
		op.Path = s.Base + op.Path
		op.Tag, op.Auth = s.Tag, api.AuthKey
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
	}
	return ops
}
