package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// devVar is one exported shell variable of the banner.
type devVar struct{ name, value, note string }

// kept is what a restart of pmapi dev on the same data directory prints again:
// the session and API key are stored hashed in the database, so their values
// live only here, beside the data (the directory is private to the user, the
// file 0600), as the banner's export lines that `source` reads too.
type kept struct{ SID, APIKey, AdminToken string }

// devEnvPath is where a data directory keeps its export lines; a Citus run
// has a database of its own, so credentials of its own.
func devEnvPath(dataDir string, citus bool) string {
	if citus {
		return filepath.Join(dataDir, "citus.env")
	}
	return filepath.Join(dataDir, "dev.env")
}

// readKept reads the credentials a previous run wrote; a missing or foreign
// file gives none, and the seed issues new ones.
func readKept(path string) kept {
	f, err := os.Open(path)
	if err != nil {
		return kept{}
	}
	defer f.Close()
	var k kept
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		name, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export ")), "=")
		if !ok {
			continue
		}
		switch value = strings.TrimSpace(value); name {
		case "SID":
			k.SID = value
		case "API_KEY":
			k.APIKey = value
		case "ADMIN_TOKEN":
			k.AdminToken = value
		}
	}
	return k
}

// writeDevEnv replaces path with the export lines, readable by the user only.
func writeDevEnv(path string, vars []devVar) error {
	var b strings.Builder
	b.WriteString("# Written by pmapi dev on every start: `source` this file. Values are the demo workspace's\n")
	b.WriteString("# credentials; pmapi dev reads SID, API_KEY and ADMIN_TOKEN back to keep them across restarts.\n")
	for _, v := range vars {
		fmt.Fprintf(&b, "export %s=%s\n", v.name, v.value)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
