// Package authz owns who a caller is: console users and their sessions, apps, API
// keys, OAuth grants and JWTs, and the scope rules. Secrets are generated here,
// stored only as SHA-256 hashes and compared in constant time.
package authz
