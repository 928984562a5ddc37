//go:build e2e

package soak

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	judge "github.com/leakbench/leakbench/reports/soak"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestE2ELongSoakProfile plays the built-in soak profile with leakbench
// soak's default settings (make e2e-long, about 10 minutes): the rare leak
// (commit-in-finally-rare) is judged growing with its culprit named, the
// fixed variant flat.
func TestE2ELongSoakProfile(t *testing.T) {
	p, err := profiles.Lookup("soak")
	if err != nil {
		t.Fatal(err)
	}
	// cmd/leakbench soak's defaults.
	set := rundir.SoakSettings{Baseline: 10 * time.Second, Warmup: 30 * time.Second, CoolDown: 30 * time.Second, MinPoints: 30, MinR2: 0.5}
	for _, c := range []struct {
		variant string
		want    error
		verdict string
	}{{"commit-in-finally-rare", ErrGrowing, judge.Growing}, {"fixed", nil, judge.Flat}} {
		t.Run(c.variant, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			sum, err := Run(ctx, Options{Profile: p, Variant: c.variant, Dir: filepath.Join(t.TempDir(), "soak"), Env: "local", Settings: set, Version: "test"})
			if errors.Is(err, fixtures.ErrMissingBinary) {
				testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
			}
			if sum == nil || sum.Soak == nil {
				t.Fatalf("no soak section in the summary (soak: %v)", err)
			}
			for _, r := range sum.Soak.Resources {
				t.Logf("%s: %s", r.Name, r.Line)
			}
			if !errors.Is(err, c.want) && (c.want != nil || err != nil) {
				t.Fatalf("soak: %v, want %v", err, c.want)
			}
			if sum.Soak.Verdict != c.verdict {
				t.Errorf("verdict %q, want %q", sum.Soak.Verdict, c.verdict)
			}
		})
	}
}
