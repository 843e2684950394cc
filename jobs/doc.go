// Package jobs runs pmapi's background work on River, one client per shard: jobs
// are inserted in the same transaction as the change that causes them and worked
// by `pmapi work` (or by `pmapi dev` in the same process as the API).
package jobs
