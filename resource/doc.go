// Package resource holds one package per workspace resource (projects, tasks,
// risks, notes, ...). Each package keeps the resource's rules (validation, state
// machines) as plain Go in its own files, its JSON views and request types, and
// all of its SQL in store.go; handlers in package api decode, call the store and
// encode, and never hold SQL.
package resource
