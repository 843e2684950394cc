// Package tenant turns a client id into a workspace and a shard, and runs tenant
// work inside a transaction that row-level security binds to that workspace.
//
// The workspace setting is made in exactly one place (setting.go). A read costs one
// round trip: the setting and the queries travel in one pgx batch, which the
// server runs as one implicit transaction. A write begins its transaction in the
// same batch as the setting, so it costs the statements plus one commit.
//
// On a Citus cluster a shard routes (route.go): each workspace's transactions
// run on the node that holds its shard group, over a pool per node, where
// Citus executes them locally; the coordinator keeps what is not a
// workspace's.
package tenant
