// Package storekit holds what the resource stores share: reads of one row or
// of a list in the workspace's read (Get, List, QueueRow, QueueRows,
// ReadUnder, Found), rows written as their views' JSON straight from
// PostgreSQL's wire values (RowJSON, ListJSON, GetJSON), a transaction that answers its result (Tx), the WHERE
// clause and keyset of a workspace's list query, LIKE escaping, the check that
// user ids name users of the workspace, archive and restore (Archival), the
// runs of a batch (Do, DoAtomic) and the failure of an atomic one, and the ids
// a cascade removed. Every statement stays whole in the store that owns its
// table, where internal/sqlcheck reads it; this package only runs them and
// builds the parts that were once copied into each.
package storekit
