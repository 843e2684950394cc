// Package migrations holds pmapi's schema as ordered, embedded SQL files and the
// migrator that applies them, followed by River's own migrations (in schema
// "river") and the grants that let the server's role use both.
//
// Migrations run as the owner role. Every tenant table leads its primary key and
// unique indexes with workspace_id and has row-level security ENABLEd and FORCEd
// with one policy on the pmapi.workspace_id setting; a test enforces this for
// every table a future migration adds.
package migrations
