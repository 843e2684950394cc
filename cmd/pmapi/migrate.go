package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/pmapi/pmapi/migrations"
)

func runMigrate(ctx context.Context, args []string) error {
	if len(args) != 1 || (args[0] != "up" && args[0] != "status") {
		return fmt.Errorf("usage: pmapi migrate up|status")
	}
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	if cfg.MigrateURL == "" {
		return fmt.Errorf("PMAPI_MIGRATE_DATABASE_URL (or PMAPI_DATABASE_URL) is required: the owner role's URL")
	}
	targets := map[string]string{"default": cfg.MigrateURL}
	for k, v := range cfg.MigrateShards {
		targets[k] = v
	}
	names := make([]string, 0, len(targets))
	for k := range targets {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if args[0] == "up" {
			if err := migrations.UpWith(ctx, targets[name], migrations.UpOptions{NodeAddrs: cfg.CitusNodes}); err != nil {
				return fmt.Errorf("shard %s: %w", name, err)
			}
			fmt.Printf("shard %s: migrated\n", name)
			marked, err := migrations.MarkSearchLeakproof(ctx, targets[name])
			if err != nil {
				return fmt.Errorf("shard %s: %w", name, err)
			}
			if !marked {
				fmt.Printf(
					"shard %s: search cannot use its indexes until a superuser runs, "+
						"in this database (on Citus: on every node):\n  %s;\n",
					name,
					strings.Join(migrations.SearchLeakproof, ";\n  "),
				)
			}
			continue
		}
		lines, err := migrations.Status(ctx, targets[name])
		if err != nil {
			return fmt.Errorf("shard %s: %w", name, err)
		}
		printStatus(name, lines)
	}
	return nil
}

func printStatus(shard string, lines []migrations.StatusLine) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "SHARD\tSOURCE\tVERSION\tNAME\tSTATE\tCHECKSUM\n")
	for _, l := range lines {
		state, sum := "pending", "-"
		if l.Applied {
			state = "applied"
			if !l.AppliedAt.IsZero() {
				state += " " + l.AppliedAt.UTC().Format("2006-01-02 15:04:05Z")
			}
		}
		switch {
		case l.Changed:
			sum = "CHANGED since applied: migrate up refuses to run"
		case l.Checksum != "":
			sum = l.Checksum[:12]
		case l.Applied && l.Source == "pmapi":
			sum = "not recorded yet (the next migrate up records it)"
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", shard, l.Source, l.Version, l.Name, state, sum)
	}
	w.Flush()
}
