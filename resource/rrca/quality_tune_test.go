package rrca_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/testdb"
	"github.com/pmapi/pmapi/resource/rrca/quality"
	"github.com/pmapi/pmapi/resource/rrca/suggest"
)

// TestQualityOnTheTuneSplitInProcess measures the ranking and the 5-why
// engine on the benchmark's tune split in process (quality.Offline, a
// second or two), where the settings were chosen, and holds them to the
// floors the measure split is held to through the API
// (TestQualityFloorsOnTheMeasureSplit): a change of weights that the tune
// split already refutes fails here before the slower test runs.
func TestQualityOnTheTuneSplitInProcess(t *testing.T) {
	ctx := context.Background()
	ds, err := quality.Load()
	if err != nil {
		t.Fatal(err)
	}
	ds = ds.Only(func(_, split, _ string) bool { return split == quality.SplitTune })
	off, err := quality.NewOffline(ctx, ds, quality.Postgres{DB: testdb.OwnerPool(t)})
	if err != nil {
		t.Fatal(err)
	}
	rep := quality.Report{Analyses: len(ds.Analyses), Rankings: off.Rank(quality.Current)}
	if rep.Suggestions, err = off.FiveWhy(ctx, quality.Current, suggest.Deterministic{}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out, true)
	t.Log("\n" + out.String())
	tune := quality.SplitTune
	for _, f := range []struct {
		set   string
		floor float64
	}{{quality.SetHardNegative, 0.9}, {quality.SetHardNegativeEarly, 0.6}, {quality.SetParaphrase, 0.95},
		{quality.SetParaphraseEarly, 0.95}, {quality.SetNearDuplicate, 0.95}} {
		if r := rep.Ranking(tune, f.set); r.N == 0 || r.Top1 < f.floor {
			t.Errorf("%s: top-1 %.2f of %d, want at least %.2f", f.set, r.Top1, r.N, f.floor)
		}
	}
	if s := rep.Suggestion(tune, "5-why"); s.Suggested == 0 || s.Precision < 0.8 || s.Restated > 0 {
		t.Errorf("5-why suggestions: precision %.2f of %d, %d restated; want at least 0.80 and none restated",
			s.Precision, s.Suggested, s.Restated)
	}
}
