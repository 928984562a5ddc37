package soak

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	judge "github.com/leakbench/leakbench/reports/soak"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// testProfile is a scaled-down soak: 30 users for 40 s against a local
// stack whose pools leave room for every leak, an idle-in-transaction
// timeout longer than the test (a leaked session stays), one leak in 20.
const testProfile = `
stack:
  idle_in_transaction_session_timeout: 10m
  max_connections: 140
  pgbouncer_pool_size: 110
  gateway_pool_size: 110
  gateway_rare_leak_every: 20
  users: 60
probe:
  interval: 200ms
  stuck_after: 1s
timeout: 5s
seed: 1
scenarios:
  agents:
    executor: constant-vus
    vus: 30
    duration: 40s
    gracefulStop: 1s
    flow:
      - think: { uniform: [500ms, 1s] }
      - tools/call: { name: get_team_tools }
`

// TestSoakRareLeakAndFixed soaks the rare-leak variant (one request in 20)
// and the fixed one on the real local stack: the first must be judged
// growing, its culprit the token-scoping SELECT; the second flat.
func TestSoakRareLeakAndFixed(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: two local stacks under a 40 s load each")
	}
	t.Parallel() // beside TestSoakExternalTarget, and its two soaks beside each other: see there
	p, err := profiles.Parse([]byte(testProfile), "soak test profile")
	if err != nil {
		t.Fatal(err)
	}
	set := rundir.SoakSettings{Baseline: 3 * time.Second, Warmup: 8 * time.Second, CoolDown: 8 * time.Second, MinPoints: 20}
	for _, c := range []struct {
		variant string
		want    error
		verdict string
	}{
		{"commit-in-finally-rare", ErrGrowing, judge.Growing},
		{"fixed", nil, judge.Flat},
	} {
		t.Run(c.variant, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "soak")
			tel := &recordedTelemetry{}
			sum, err := Run(ctx, Options{Profile: p, Variant: c.variant, Dir: dir, Env: "local", Settings: set, Version: "test", Telemetry: tel})
			if errors.Is(err, fixtures.ErrMissingBinary) {
				testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
			}
			if sum == nil || sum.Soak == nil {
				t.Fatalf("no soak section in the summary (soak: %v)", err)
			}
			for _, r := range sum.Soak.Resources {
				t.Logf("%s: %s", r.Name, r.Line)
			}
			if l := sum.Soak.Leakbench; l != nil {
				t.Logf("%s: %s", l.Name, l.Line)
			}
			if !errors.Is(err, c.want) && (c.want != nil || err != nil) {
				t.Fatalf("soak: %v, want %v", err, c.want)
			}
			if sum.Soak.Verdict != c.verdict {
				t.Errorf("verdict %q, want %q", sum.Soak.Verdict, c.verdict)
			}
			if c.verdict == judge.Growing {
				var grew bool
				for _, r := range sum.Soak.Resources {
					grew = grew || r.Verdict == judge.Growing && strings.HasPrefix(r.Name, "connections held (mcp-gateway")
				}
				if !grew {
					t.Error("the gateway's connections (database view) were not judged growing")
				}
				if len(sum.Soak.Culprits) == 0 || !strings.Contains(sum.Soak.Culprits[0].ExampleQuery, "email_team_members") {
					t.Errorf("culprits %+v, want the token-scoping SELECT on email_team_members first", sum.Soak.Culprits)
				}
			}
			for _, f := range []string{rundir.ProcessFile, "plots/soak.png", rundir.ReportFile, rundir.HTMLFile} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("the soak wrote no %s: %v", f, err)
				}
			}
			// --otlp-endpoint on soak: the soak is exported as a run, its
			// requests as spans.
			if tel.written != "soak" || tel.requests.Load() == 0 || tel.requests.Load() > sum.Load.Requests {
				t.Errorf("exported the run %q with %d request spans, want \"soak\" with its requests (%d)", tel.written, tel.requests.Load(), sum.Load.Requests)
			}
			md, _ := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
			if !strings.Contains(string(md), "## Soak: ") {
				t.Error("report.md has no soak section")
			}
		})
	}
}

// recordedTelemetry records what a soak exported: its requests, and the
// run written.
type recordedTelemetry struct {
	requests atomic.Int64
	written  string
}

func (r *recordedTelemetry) Spans(string) engine.SpanSink { return r }

func (r *recordedTelemetry) RequestEnded(*reqindex.Request, string) { r.requests.Add(1) }

func (r *recordedTelemetry) RunWritten(_ context.Context, _ string, sum *rundir.Summary, _ string, _ io.Writer) {
	r.written = sum.Name
}
