// Package storekit holds what the resource stores share: the WHERE clause and
// keyset of a workspace's list query, LIKE escaping, the check that user ids
// name users of the workspace, the failure of an atomic batch, and the ids a
// cascade removed. Every statement stays in the store that owns its table;
// this package only builds the parts that were once copied into each.
package storekit
