package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pmapi/pmapi/authz"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// secretBox seals under PMAPI_SECRET_KEY and opens under it and
// PMAPI_SECRET_KEY_PREVIOUS.
func secretBox(cfg config) (*seal.Box, error) {
	if cfg.SecretKey == "" {
		return nil, errors.New(
			"PMAPI_SECRET_KEY is required: 32 random bytes in base64 (openssl rand -base64 32); " +
				"it seals webhook signing secrets and OAuth signing keys",
		)
	}
	return seal.New(cfg.SecretKey, cfg.SecretKeyPrevious...)
}

// sealedDirectory opens what the sealing commands (reseal, rotate-key) work
// on: the configuration's secret box and the directory over its shards;
// closeShards closes the shards.
func sealedDirectory(
	ctx context.Context,
) (cfg config, box *seal.Box, dir *tenant.Directory, closeShards func(), err error) {
	if cfg, err = loadConfig(); err != nil {
		return cfg, nil, nil, nil, err
	}
	if box, err = secretBox(cfg); err != nil {
		return cfg, nil, nil, nil, err
	}
	shards, err := openShards(ctx, cfg)
	if err != nil {
		return cfg, nil, nil, nil, err
	}
	return cfg, box, tenant.NewDirectory(shards), shards.Close, nil
}

// resealers are the owners of sealed values; each reseals its own tables
// (docs/architecture.md: each package runs the SQL of its own tables).
var resealers = []func(context.Context, *tenant.Directory, *seal.Box) ([]seal.Report, error){
	authz.Reseal,
	webhook.Reseal,
}

// resealResult is what `pmapi admin reseal` prints.
type resealResult struct {
	KeyID   string        `json:"keyId"`
	Columns []seal.Report `json:"columns"`
}

// runReseal rewrites every sealed value under the current PMAPI_SECRET_KEY
// (docs/operations.md, "Rotating PMAPI_SECRET_KEY"). It fails when a value
// opens under no configured key, after resealing everything else.
func runReseal(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("reseal", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("reseal takes no arguments")
	}
	_, box, dir, closeShards, err := sealedDirectory(ctx)
	if err != nil {
		return err
	}
	defer closeShards()
	res := resealResult{KeyID: box.KeyID()}
	var runErr error
	for _, reseal := range resealers {
		reports, err := reseal(ctx, dir, box)
		res.Columns = append(res.Columns, reports...)
		if err != nil {
			runErr = err
			break
		}
	}
	failed := 0
	for i := range res.Columns {
		if res.Columns[i].Failed == nil {
			res.Columns[i].Failed = []string{}
		}
		failed += len(res.Columns[i].Failed)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Fprintln(out, string(b))
	if runErr != nil {
		return fmt.Errorf("reseal stopped (run it again to continue): %w", runErr)
	}
	if failed > 0 {
		return fmt.Errorf(
			"%d sealed values open under none of the configured keys (listed under failed): "+
				"add the key they were sealed under to PMAPI_SECRET_KEY_PREVIOUS and run reseal again",
			failed,
		)
	}
	return nil
}
