// Package pgcluster finds or starts the PostgreSQL server that `pmapi dev` and the
// tests use, and provisions pmapi's two roles and a database on it.
//
// The order of preference is fixed so a fresh machine needs no set-up: an explicit
// PMAPI_DATABASE_URL (a server where pmapi may create roles and databases), then the
// PostgreSQL server binaries installed on the machine (a private cluster in a
// directory of its own, on a free loopback port), then a Docker engine (a container
// through dockertest), and otherwise one error that says what to install.
//
// The Docker fallback is compiled only with the build tag pgdocker: it links the
// Docker client (docker/docker, docker/cli), and this package is imported by the
// pmapi binary that runs in production (`pmapi dev`, `pmapi devdb`), where image
// scanners would flag it. The Makefile adds the tag on a machine that has no
// PostgreSQL server binaries.
//
// Asked for Citus, it launches a coordinator and two workers from the binaries and
// the Citus extension (or takes a URL of a coordinator). The provisioning functions
// work out the topology from the admin URL alone (Discover), so every process that
// holds the coordinator's URL creates, clones and drops a database on every node.
package pgcluster
