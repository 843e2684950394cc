// Package tenant turns a client id into a workspace and a shard, and runs tenant
// work inside a transaction that row-level security binds to that workspace.
//
// The workspace setting is made in exactly one place (setting.go). A read costs one
// round trip: the setting and the queries travel in one pgx batch, which the
// server runs as one implicit transaction. A write begins its transaction in the
// same batch as the setting, so it costs the statements plus one commit.
package tenant
