package reports

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/sizing"
)

// sizingRun writes a run directory whose summary and load are s and
// points, as a run would leave them.
func sizingRun(t *testing.T, s *rundir.Summary, points []rundir.LoadPoint) string {
	t.Helper()
	dir := t.TempDir()
	if err := writeJSON(filepath.Join(dir, rundir.SummaryFile), s); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for _, p := range points {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.LoadFile), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSizeRunUseP95: a service pool's use-time histogram gives the p95
// beside the mean, with its source and the bucket it fell in, and a
// lower bound says it is one.
func TestSizeRunUseP95(t *testing.T) {
	for _, tc := range []struct {
		q    rundir.PoolTimeQuantile
		want []string
	}{
		{rundir.PoolTimeQuantile{Seconds: 0.2, BucketLowSeconds: 0.1, BucketHighSeconds: 0.25}, []string{"use_time histogram, 1000 checkouts", "an estimate", "within the bucket from 0.1 to 0.25 s"}},
		{rundir.PoolTimeQuantile{Seconds: 10, BucketLowSeconds: 10, AtLeast: true}, []string{"at least 10 s", "a lower bound"}},
	} {
		s := synthetic.SizingSummary()
		s.Probe.AppPoolSampled, s.Probe.AppPoolMax = true, 10
		s.Probe.AppPoolUses, s.Probe.AppPoolUseSeconds, s.Probe.AppPoolUseMeanSeconds = 1000, 110, 0.11
		s.Probe.AppPoolUseQuantiles = &rundir.PoolTimeQuantiles{P95: tc.q, Observations: 1000, Buckets: 8,
			Source: "measured: the service pool's use_time histogram, 1000 checkouts over the run in 8 finite buckets; an estimate"}
		sz, err := SizeRun(sizingRun(t, s, synthetic.LoadPoints(91)), sizing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		in, ok := input(sz, "service pool use time per checkout, p95")
		if !ok || in.Value == nil || *in.Value != tc.q.Seconds {
			t.Fatalf("p95 input %+v, want %g", in, tc.q.Seconds)
		}
		for _, w := range tc.want {
			if !strings.Contains(in.Source, w) {
				t.Errorf("source %q lacks %q", in.Source, w)
			}
		}
		if strings.Contains(strings.Join(sz.Missing, "\n"), "p95") {
			t.Errorf("p95 named missing: %q", sz.Missing)
		}
	}
}

func input(sz *rundir.Sizing, name string) (rundir.SizingInput, bool) {
	for _, in := range sz.Inputs {
		if in.Name == name {
			return in, true
		}
	}
	return rundir.SizingInput{}, false
}

func closeTo(got, want float64) bool { return math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want)) }

// TestSizeRun checks the arithmetic on synthetic runs: with the service's
// pool metrics (its use time is the hold) and without (the database's
// busy backend-seconds are), with PgBouncer in front and without; and
// that what is missing is named and what needed it left out.
func TestSizeRun(t *testing.T) {
	three, two := 3, 2
	fifty := 50.0
	for _, tc := range []struct {
		name    string
		edit    func(s *rundir.Summary)
		peak    int64
		opts    sizing.Options
		hold    float64
		source  string
		ceiling float64 // 0: none
		pool    int
		checks  map[string][2]int // resource → need, have (need -1: not computed)
		missing []string
		md      []string
	}{
		{
			name: "pool metrics, no PgBouncer",
			edit: func(s *rundir.Summary) {
				s.Probe.AppPoolSampled, s.Probe.AppPoolMax = true, 10
				s.Probe.AppPoolUses, s.Probe.AppPoolUseSeconds, s.Probe.AppPoolUseMeanSeconds = 1000, 110, 0.11
			},
			peak: 91, opts: sizing.Options{Replicas: &three},
			// h = 110 s / 1000 requests; P/h = 90.9; R = 91, R·h = 10.01:
			// Erlang C at 5% asks 17 (16 would wait 5.8% of the time).
			hold: 0.11, source: "measured: the service pool's use_time", ceiling: 10 / 0.11, pool: 17,
			checks:  map[string][2]int{"service pool": {17, 10}, "PostgreSQL max_connections": {17*3 + 3, 100}},
			missing: []string{"service pool use time per checkout, p95"}, // a sum and a count: a mean only
			md:      []string{"## Sizing", "Ceiling: the pool serves at most **90.9 req/s**", "the pool needs **17**", "service pool: **does NOT fit**", "PostgreSQL max_connections: fits — every replica's pool of 17 connects to PostgreSQL directly: 17 × 3 replicas + 3 reserved = 54 of 100"},
		},
		{
			name: "no pool metrics, PgBouncer",
			edit: func(s *rundir.Summary) {
				s.Probe.PgBouncerSampled, s.Probe.PgBouncerPoolSize = true, 20
				// The probe's reading wins over the stack's configuration.
				s.Environment.PgBouncerVersion, s.Environment.PgBouncerPoolSize = "1.18", 40
			},
			opts: sizing.Options{TargetRate: &fifty, Replicas: &two},
			// h = 2 × 50 s / 1000 = 0.1; R = 50: R·h = 5, Erlang C asks 10.
			hold: 0.1, source: "measured: the database's busy backend-seconds", pool: 10,
			checks:  map[string][2]int{"PgBouncer default_pool_size": {20, 20}, "PostgreSQL max_connections": {23, 100}},
			missing: []string{"pool size P"},
			md:      []string{"pool size P | — | not measured", "PgBouncer default_pool_size: fits", "measured: PgBouncer's SHOW DATABASES pool_size"},
		},
		{
			name: "replicas not given",
			edit: func(s *rundir.Summary) { s.Environment.GatewayPoolSize = 10 },
			peak: 50,
			hold: 0.1, source: "measured: the database's", ceiling: 100, pool: 10,
			checks:  map[string][2]int{"service pool": {10, 10}, "PostgreSQL max_connections": {-1, 100}},
			missing: []string{"replicas"},
			md:      []string{"room for 9 such replicas", "stack config: the reference gateway's pool"},
		},
		{
			name: "no load",
			edit: func(s *rundir.Summary) { s.Load = nil },
			hold: 0, missing: []string{"hold h", "target rate R"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := synthetic.SizingSummary()
			if tc.edit != nil {
				tc.edit(s)
			}
			var points []rundir.LoadPoint
			if tc.peak > 0 {
				points = synthetic.LoadPoints(tc.peak)
			}
			dir := sizingRun(t, s, points)
			sz, err := SizeRun(dir, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(sz.HoldSeconds, tc.hold) || !closeTo(sz.CeilingReqPerS, tc.ceiling) || sz.PoolNeeded != tc.pool {
				t.Errorf("hold %g ceiling %g pool %d, want %g, %g, %d", sz.HoldSeconds, sz.CeilingReqPerS, sz.PoolNeeded, tc.hold, tc.ceiling, tc.pool)
			}
			if in, ok := input(sz, "hold h"); tc.hold > 0 && (!ok || !strings.HasPrefix(in.Source, tc.source)) {
				t.Errorf("hold h input %+v, want from %q", in, tc.source)
			}
			if sz.PoolNeeded > 0 && (sz.WaitProbability > 0.05 || !strings.Contains(sz.Model, "Erlang C")) {
				t.Errorf("model %q wait %g: want Erlang C within 5%%", sz.Model, sz.WaitProbability)
			}
			got := map[string]rundir.SizingCheck{}
			for _, c := range sz.Checks {
				got[c.Resource] = c
			}
			if len(got) != len(tc.checks) {
				t.Errorf("checks %+v, want %v", sz.Checks, tc.checks)
			}
			for res, nh := range tc.checks {
				c, ok := got[res]
				switch {
				case !ok:
					t.Errorf("no %s check", res)
				case c.Have == nil || *c.Have != nh[1]:
					t.Errorf("%s: have %v, want %d", res, c.Have, nh[1])
				case nh[0] < 0 && (c.Need != nil || c.Fits != nil):
					t.Errorf("%s: need %v fits %v without replicas, want neither", res, *c.Need, *c.Fits)
				case nh[0] >= 0 && (c.Need == nil || *c.Need != nh[0] || *c.Fits != (nh[0] <= nh[1])):
					t.Errorf("%s: %+v, want need %d of %d", res, c, nh[0], nh[1])
				}
			}
			for _, m := range tc.missing {
				if in, ok := input(sz, m); !ok || in.Value != nil || !strings.Contains(strings.Join(sz.Missing, "\n"), m) {
					t.Errorf("%s: %+v, want it named missing (missing: %q)", m, in, sz.Missing)
				}
			}
			// The run's files say it: summary.json keeps it, report.md shows it.
			back, err := ReadRun(dir)
			if err != nil || back.Sizing == nil || back.Sizing.PoolNeeded != tc.pool {
				t.Fatalf("summary.json sizing %+v (%v)", back.Sizing, err)
			}
			md, _ := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
			for _, want := range tc.md {
				if !strings.Contains(string(md), want) {
					t.Errorf("report.md lacks %q:\n%s", want, md)
				}
			}
		})
	}
}

// TestSizeRunBadInput: a target rate of zero or less, zero replicas and a
// run without a probe are ErrInput, and nothing is written.
func TestSizeRunBadInput(t *testing.T) {
	zero, neg, none := 0.0, -5.0, 0
	unprobed := synthetic.SizingSummary()
	unprobed.Probe = nil
	for _, tc := range []struct {
		name string
		s    *rundir.Summary
		o    sizing.Options
		want string
	}{
		{"target rate 0", synthetic.SizingSummary(), sizing.Options{TargetRate: &zero}, "--target-rate 0"},
		{"target rate negative", synthetic.SizingSummary(), sizing.Options{TargetRate: &neg}, "--target-rate -5"},
		{"replicas 0", synthetic.SizingSummary(), sizing.Options{Replicas: &none}, "--replicas 0"},
		{"no probe", unprobed, sizing.Options{}, "needs the database view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sizingRun(t, tc.s, nil)
			_, err := SizeRun(dir, tc.o)
			if !errors.Is(err, sizing.ErrInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrInput saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, rundir.ReportFile)); err == nil {
				t.Error("report.md written for bad input")
			}
		})
	}
}

// TestCompareSizing: a sign-off whose runs were both sized says what the
// fix did to the hold and to the pool's ceiling.
func TestCompareSizing(t *testing.T) {
	ten := 10.0
	sized := func(name string, h float64) *rundir.Summary {
		s := synthetic.SizingSummary()
		s.Name, s.Environment.Variant = name, name
		s.Sizing = &rundir.Sizing{HoldSeconds: h, CeilingReqPerS: ten / h,
			Inputs: []rundir.SizingInput{{Name: "pool size P", Value: &ten, Unit: "connections", Source: "measured"}}}
		return s
	}
	c := &Comparison{Before: sized("before", 1.9), After: sized("after", 0.11)}
	var md strings.Builder
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	want := "Hold fell from 1.9 s to 110 ms per request (before → after, measured from the database): the same pool of 10 now serves at most 90.9 req/s instead of 5.26."
	if !strings.Contains(md.String(), want) {
		t.Errorf("compare report lacks %q:\n%s", want, md.String())
	}
}

// TestCompareSizingOneSideUnmeasured: when only one run's hold was
// measured, the sign-off names the side that lacks it instead of dropping
// the line; when neither was, it has no Sizing section.
func TestCompareSizingOneSideUnmeasured(t *testing.T) {
	run := func(name string, h float64) *rundir.Summary {
		s := synthetic.SizingSummary()
		s.Name, s.Environment.Variant = name, name
		s.Sizing = nil
		if h > 0 {
			s.Sizing = &rundir.Sizing{HoldSeconds: h}
		}
		return s
	}
	for _, tc := range []struct {
		before, after float64
		want          string
	}{
		{1.9, 0, "Hold not compared: leaky's was 1.9 s per request, fixed's was not measured"},
		{0, 0.11, "Hold not compared: leaky's was not measured (its report's Sizing section says why), fixed's was 110 ms per request"},
		{0, 0, ""},
	} {
		var md strings.Builder
		if err := (&Comparison{Before: run("leaky", tc.before), After: run("fixed", tc.after)}).WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		got := md.String()
		if tc.want == "" {
			if strings.Contains(got, "## Sizing") {
				t.Errorf("neither hold measured: want no Sizing section:\n%s", got)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("before %v after %v: the report lacks %q:\n%s", tc.before, tc.after, tc.want, got)
		}
	}
}
