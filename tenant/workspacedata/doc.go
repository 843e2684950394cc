// Package workspacedata reads and deletes every row of one workspace, in every
// table that holds one: the export of a workspace and its erasure
// (docs/decisions/workspace-lifecycle.md).
//
// It is the one exception to "each package runs the SQL of its own tables
// only", as migrations is for DDL: the tables come from the catalog (every
// table of the public schema with a workspace_id column), so a table added
// later is exported and erased without anyone remembering to, and this
// package names no table of another's except the directory's workspaces row
// and its own workspace_erasures. Tables under row-level security are the
// workspace's and are read and deleted in its transactions on its shard;
// those without are the directory's (client ids, user codes, people's
// emails), on the directory's pool.
package workspacedata
