package capacity

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/pgshared"
	"github.com/leakbench/leakbench/reports/sizing"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// sizedProfile is two short stages of users calling generate_report,
// which holds a pooled connection for 50 ms: enough transactions for the
// probe to measure a hold.
const sizedProfile = `
probe: {interval: 100ms, stuck_after: 1s, drain: 1s}
capacity:
  load: users
  start: 2
  max: 4
  factor: 2
  stage: 5s
  max_stages: 2
  pool: off
  error_rate: 0.5
  generator: off
timeout: 10s
seed: 1
scenarios:
  reports:
    executor: constant-vus
    vus: 1
    duration: 5s
    gracefulStop: 1s
    flow:
      - think: {uniform: [20ms, 60ms]}
      - tools/call: {name: generate_report, arguments: {seconds: 0.05}}
`

// TestCapacitySizesForTargetRate: a probed search given a target rate and
// replicas sizes every stage for them — in each stage's own run directory
// and in the search's sizing — with the flags as the inputs' sources.
func TestCapacitySizesForTargetRate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := pgshared.Start(t, ctx, stack.Config{GatewayPoolSize: 4})
	p, sp := resolveProfile(t, sizedProfile, "sized.yaml")
	rate, replicas := 37.5, 3
	out := t.TempDir()
	sum, err := Run(ctx, Options{Profile: p, Spec: sp, Out: out, Log: testLog{t}, Version: "test", Name: "sized",
		Target: &fixtures.External{GatewayURL: env.GatewayURL, ProbeDSN: env.ProbeDSN, Tokens: env.Tokens},
		Sizing: sizing.Options{TargetRate: &rate, Replicas: &replicas}})
	if err != nil && !errors.Is(err, ErrInconclusive) {
		t.Fatalf("search: %v", err)
	}
	s := sum.Capacity.Searches[0]
	if len(s.Stages) == 0 {
		t.Fatal("no stage ran")
	}
	sized := func(where string, sz *rundir.Sizing) {
		t.Helper()
		if sz == nil {
			t.Fatalf("%s: no sizing", where)
		}
		o := sz.Options
		if o.TargetReqPerS == nil || *o.TargetReqPerS != rate || o.Replicas == nil || *o.Replicas != replicas {
			t.Errorf("%s: sizing options %+v; want %g req/s and %d replicas", where, o, rate, replicas)
		}
		if sz.HoldSeconds > 0 && sz.TargetReqPerS != rate {
			t.Errorf("%s: sized for %g req/s, want the flag's %g", where, sz.TargetReqPerS, rate)
		}
		src := map[string]string{}
		for _, in := range sz.Inputs {
			src[in.Name] = in.Source
		}
		if src["target rate R"] != "flag: --target-rate" || src["replicas"] != "flag: --replicas" {
			t.Errorf("%s: inputs' sources %v; want the flags", where, src)
		}
	}
	sized("the search", s.Sizing)
	if s.Sizing.HoldSeconds <= 0 {
		t.Errorf("the search's sizing measured no hold: %+v", s.Sizing.Missing)
	}
	for _, st := range s.Stages {
		raw, err := os.ReadFile(filepath.Join(out, st.Dir, rundir.SummaryFile))
		if err != nil {
			t.Fatalf("stage %d: %v", st.Index, err)
		}
		var rs rundir.Summary
		if err := json.Unmarshal(raw, &rs); err != nil {
			t.Fatalf("stage %d: %v", st.Index, err)
		}
		sized(st.Dir, rs.Sizing)
	}
}

// TestCapacitySizingRefused: a target rate of 0 or below, zero replicas,
// and sizing a search whose target has no probe are refused before any
// stage, with nothing written.
func TestCapacitySizingRefused(t *testing.T) {
	p, sp := resolveProfile(t, sizedProfile, "sized.yaml")
	zero, neg, none := 0.0, -2.0, 0
	ten := 10.0
	for _, tc := range []struct {
		name string
		o    sizing.Options
		ext  fixtures.External
	}{
		{"rate 0", sizing.Options{TargetRate: &zero}, fixtures.External{GatewayURL: "http://127.0.0.1:1/mcp", ProbeDSN: "postgres://127.0.0.1:1/x"}},
		{"rate -2", sizing.Options{TargetRate: &neg}, fixtures.External{GatewayURL: "http://127.0.0.1:1/mcp", ProbeDSN: "postgres://127.0.0.1:1/x"}},
		{"replicas 0", sizing.Options{Replicas: &none}, fixtures.External{GatewayURL: "http://127.0.0.1:1/mcp", ProbeDSN: "postgres://127.0.0.1:1/x"}},
		{"no probe", sizing.Options{TargetRate: &ten}, fixtures.External{GatewayURL: "http://127.0.0.1:1/mcp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, err := Run(context.Background(), Options{Profile: p, Spec: sp, Out: out, Target: &tc.ext, Sizing: tc.o})
			if !errors.Is(err, ErrSpec) {
				t.Errorf("err %v; want ErrSpec", err)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("a refused search wrote %s", out)
			}
		})
	}
}
