package capacity

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestSearchFindsTheKnee plays the search against a service that holds
// every load up to knee: it must stop within the resolution, at the right
// side of the knee, in few stages.
func TestSearchFindsTheKnee(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spec       Spec
		knee       int
		wantGood   int
		maxStages  int
		wantBadGap int
	}{
		{"doubling then bisecting", Spec{Start: 10, Max: 1000, Factor: 2, ResolutionFrac: 0.1, MaxStages: 12}, 38, 36, 8, 4},
		{"absolute resolution", Spec{Start: 4, Max: 100, Factor: 2, ResolutionAbs: 1, MaxStages: 12}, 12, 12, 8, 1},
		{"first stage breaks: down", Spec{Start: 100, Max: 1000, Factor: 2, ResolutionAbs: 2, MaxStages: 12}, 30, 29, 8, 2},
		{"held up to max", Spec{Start: 10, Max: 50, Factor: 2, ResolutionFrac: 0.1, MaxStages: 12}, 1000, 50, 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSearch(tc.spec)
			stages := 0
			for {
				load, ok := s.Next()
				if !ok {
					break
				}
				if stages++; stages > 40 {
					t.Fatal("the search does not end")
				}
				s.Record(load, load <= tc.knee)
			}
			if s.good < tc.wantGood || s.good > tc.knee || stages > tc.maxStages {
				t.Errorf("good %d bad %d in %d stages; want good in [%d, %d] within %d stages", s.good, s.bad, stages, tc.wantGood, tc.knee, tc.maxStages)
			}
			if tc.wantBadGap > 0 && (s.bad-s.good > tc.wantBadGap || !s.Resolved()) {
				t.Errorf("good %d bad %d: not within the resolution %d", s.good, s.bad, tc.wantBadGap)
			}
		})
	}
}

func TestSearchStopsOutOfStages(t *testing.T) {
	s := newSearch(Spec{Start: 1, Max: 50000, Factor: 2, ResolutionAbs: 1, MaxStages: 3})
	n := 0
	for load, ok := s.Next(); ok; load, ok = s.Next() {
		s.Record(load, true)
		n++
	}
	if n != 3 || s.Resolved() {
		t.Errorf("%d stages, resolved %v; want 3 and not resolved", n, s.Resolved())
	}
}

const specPlan = `
stack: {idle_in_transaction_session_timeout: 5s}
scenarios:
  s:
    executor: constant-vus
    vus: 1
    duration: 5s
    flow:
      - think: {fixed: 100ms}
      - tools/call: {name: echo}
`

// TestResolveRefusesBadInput: every bad capacity: section is an error
// naming what is wrong, before anything starts.
func TestResolveRefusesBadInput(t *testing.T) {
	p, err := profiles.Parse([]byte(specPlan), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ok := profiles.CapacitySection{Start: 5, Max: 100, Stage: 4 * time.Second, ErrorRate: "0.01"}
	if s, err := Resolve(ok, p.Plan); err != nil || s.Factor != 2 || s.ResolutionFrac != 0.1 || len(s.Thresholds) != 1 {
		t.Fatalf("a good section: %+v, %v", s, err)
	}
	for _, tc := range []struct {
		name string
		edit func(*profiles.CapacitySection)
		want string
	}{
		{"a metric that does not exist", func(c *profiles.CapacitySection) {
			c.Thresholds = map[string][]string{"mcp_req_latency{name:echo}": {"p(95)<100"}}
		}, `unknown metric "mcp_req_latency"`},
		{"a bad expression", func(c *profiles.CapacitySection) { c.Thresholds = map[string][]string{"mcp_req_duration": {"p95<100"}} }, "unknown aggregation"},
		{"min above max", func(c *profiles.CapacitySection) { c.Min = 500 }, "min 500 is above max 100"},
		{"a stage too short to settle", func(c *profiles.CapacitySection) { c.Stage = time.Second }, "cannot be seen to settle"},
		{"an unknown load", func(c *profiles.CapacitySection) { c.Load = "qps" }, `load "qps": want users or rate`},
		{"rate on a constant-vus scenario", func(c *profiles.CapacitySection) { c.Load = LoadRate }, "steps a constant-arrival-rate scenario"},
		{"a bad pool limit", func(c *profiles.CapacitySection) { c.Pool = "dry" }, `pool "dry"`},
		{"a bad error rate", func(c *profiles.CapacitySection) { c.ErrorRate = "2" }, `error_rate "2"`},
		{"a bad resolution", func(c *profiles.CapacitySection) { c.Resolution = "0%" }, `resolution "0%"`},
		{"a bad factor", func(c *profiles.CapacitySection) { c.Factor = 1 }, "factor 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := Resolve(c, p.Plan)
			if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an ErrSpec saying %q", err, tc.want)
			}
		})
	}
	// A --min the stages cannot climb to is refused before anything runs.
	s, err := Resolve(profiles.CapacitySection{Start: 10, Factor: 2, MaxStages: 3, Min: 500, Stage: 4 * time.Second, ErrorRate: "0.01"}, p.Plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := reach(s); err == nil || !strings.Contains(err.Error(), "--min 500 cannot be reached") {
		t.Errorf("reach: %v", err)
	}
}

func TestSettled(t *testing.T) {
	pts := func(rates ...float64) []rundir.LoadPoint {
		var out []rundir.LoadPoint
		for i, r := range rates {
			out = append(out, rundir.LoadPoint{ElapsedSeconds: float64(i + 1), ReqPerSecond: r})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		rates []float64
		stage time.Duration
		ok    bool
	}{
		{"flat", []float64{50, 100, 101, 99, 100, 98, 102}, 7 * time.Second, true},
		{"few requests, noisy", []float64{1, 3, 3, 5}, 4 * time.Second, true},
		{"climbing", []float64{5, 20, 40, 60, 80, 100, 120}, 7 * time.Second, false},
		{"too short", []float64{10, 10}, 2 * time.Second, false},
	} {
		if ok, why := settled(pts(tc.rates...), tc.stage); ok != tc.ok {
			t.Errorf("%s: settled %v (%s); want %v", tc.name, ok, why, tc.ok)
		}
	}
	// A flat load whose last tick came 20 ms after the one before it (a
	// loaded machine): 3 requests in 20 ms are 150/s, but not a climb.
	sliver := []rundir.LoadPoint{}
	for i := 1; i <= 4; i++ {
		sliver = append(sliver, rundir.LoadPoint{ElapsedSeconds: float64(i), Requests: 20, ReqPerSecond: 20})
	}
	sliver = append(sliver, rundir.LoadPoint{ElapsedSeconds: 4.002, Requests: 3, ReqPerSecond: 1500})
	if ok, why := settled(sliver, 4*time.Second); !ok {
		t.Errorf("a flat load with a sliver of an interval at its end: not settled (%s)", why)
	}
}

// TestGeneratorStopsTheSearch: a stage whose generator saturated judges
// nothing of the service — inconclusive, never the knee — unless the
// search says generator: off.
func TestGeneratorStopsTheSearch(t *testing.T) {
	sat := &rundir.Generator{Verdict: rundir.GeneratorSaturated, Reasons: []string{"schedule late by p99 840 ms"}}
	var st capreport.Stage
	generatorVerdict(&st, Spec{Generator: true}, sat)
	if st.Inconclusive == "" || !strings.Contains(st.Inconclusive, "leakbench's limit, not the service's") || st.Generator != rundir.GeneratorSaturated {
		t.Errorf("saturated: %+v", st)
	}
	st = capreport.Stage{}
	generatorVerdict(&st, Spec{Generator: false}, sat)
	if st.Inconclusive != "" || st.Generator != rundir.GeneratorSaturated {
		t.Errorf("generator off: %+v", st)
	}
	// The search that stopped there reports no capacity beyond what held.
	res := capreport.Search{Name: "fixed", Unit: "users", Reason: "stage 3 (64 users): " + "the load generator saturated"}
	se := newSearch(Spec{Start: 16, Max: 1000, Factor: 2, ResolutionFrac: 0.1, MaxStages: 8})
	se.Record(16, true)
	se.Record(32, true)
	conclude(&res, se)
	if res.Outcome != capreport.Inconclusive || res.Capacity != 32 || res.FirstBad != 0 || res.Limit != "" || res.Resolved {
		t.Errorf("concluded %+v", res)
	}
	if h := res.Headline(); !strings.Contains(h, "a lower bound, not the capacity") {
		t.Errorf("headline %q", h)
	}
}

// TestChangeSaysOnlyWhatWasMeasured: the before/after line names a change
// only where both searches measured a capacity; a search that held up to
// its max is a lower bound, and two of them measured no change.
func TestChangeSaysOnlyWhatWasMeasured(t *testing.T) {
	found := func(name string, n int) capreport.Search {
		return capreport.Search{Name: name, Capacity: n, Unit: "users", Outcome: capreport.Found}
	}
	atMax := func(name string, n int) capreport.Search {
		s := found(name, n)
		s.Outcome = capreport.AboveMax
		return s
	}
	for _, tc := range []struct {
		b, a capreport.Search
		want string
	}{
		{found("leaky", 38), found("fixed", 410), "leaky → fixed raised capacity from 38 to 410 users, 10.8×"},
		{found("leaky", 38), atMax("fixed", 400), "leaky → fixed raised capacity from 38 to at least 400 users, 10.5×"},
		{found("a", 40), found("b", 20), "a → b lowered capacity from 40 to 20 users, 0.5×"},
		{atMax("a", 8), found("b", 4), "a → b lowered capacity from at least 8 to 4 users, 0.5×"},
		{found("a", 12), found("b", 12), "a → b left capacity at 12 users"},
		{atMax("a", 8), atMax("b", 8), "a → b: both held every limit up to the search's max (8 and 8 users): no change measured; raise max to tell them apart"},
		{atMax("a", 8), found("b", 8), "a → b: before held up to the search's max (8 users), after 8: no change measured; raise max"},
	} {
		c := change([]capreport.Search{tc.b, tc.a})
		if c == nil || c.Line != tc.want {
			t.Errorf("change(%s %d %s, %s %d %s) = %+v, want %q", tc.b.Name, tc.b.Capacity, tc.b.Outcome, tc.a.Name, tc.a.Capacity, tc.a.Outcome, c, tc.want)
		}
	}
	if c := change([]capreport.Search{found("a", 10), {Name: "b", Outcome: capreport.Inconclusive, Capacity: 5}}); c != nil {
		t.Errorf("an inconclusive search gave a change: %+v", c)
	}
}

// TestForceReplacesTwoVariantsOutput: the output of a two-variant search
// (each variant in a folder of its own) is leakbench's to replace: --force
// clears it next time instead of refusing the variants' folders as
// someone else's files. The search here stops at its first stack (an
// unknown provider), after making its folders.
func TestForceReplacesTwoVariantsOutput(t *testing.T) {
	p, sp := resolveProfile(t, targetPlan, "target.yaml")
	out := t.TempDir()
	_, err := Run(context.Background(), Options{Profile: p, Spec: sp, Variants: []string{"commit-in-finally", "fixed"}, Env: "no-such-provider", Out: out, Version: "test"})
	if err == nil {
		t.Fatal("a search on an unknown provider ran")
	}
	if _, err := os.Stat(filepath.Join(out, "commit-in-finally")); err != nil {
		t.Fatalf("the first variant's folder was not made: %v", err)
	}
	if err := rundir.Prepare(out, true); err != nil {
		t.Errorf("--force over a two-variant search's output: %v", err)
	}
}
