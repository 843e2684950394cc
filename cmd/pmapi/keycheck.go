package main

import (
	"fmt"
	"io"

	"github.com/pmapi/pmapi/authz"
)

// runKeyCheck is `pmapi key-check KEY...`: offline checksum validation, as a
// secret scanner would do it. It reads no database and says nothing about
// whether a key is still active.
func runKeyCheck(args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: pmapi key-check KEY [KEY...]")
	}
	bad := 0
	for _, k := range args {
		if authz.CheckAPIKey(k) {
			fmt.Fprintf(out, "%s… valid pmapi key format and checksum\n", k[:authz.KeyDisplayPrefix])
			continue
		}
		bad++
		shown := k
		if len(shown) > authz.KeyDisplayPrefix {
			shown = shown[:authz.KeyDisplayPrefix] + "…"
		}
		fmt.Fprintf(out, "%s not a pmapi key (wrong shape or checksum)\n", shown)
	}
	if bad > 0 {
		return exitCode(1)
	}
	return nil
}
