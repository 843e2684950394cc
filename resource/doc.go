// Package resource holds one package per workspace resource (projects, tasks,
// risks, notes, ...). Each package keeps the resource's rules (validation, state
// machines) as plain Go in its own files, its JSON views and request types, and
// all of its SQL in store.go, and its routes and registration in http.go, whose
// handlers decode, call the store and encode, and never hold SQL
// (docs/architecture.md).
package resource
