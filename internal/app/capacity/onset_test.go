package capacity

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// stageRun describes a 12-second stage's run directory: when (seconds
// into the load) its requests began to fail, to be slow, sessions to be
// stuck, and the service pool to sit at its max; negative: never.
type stageRun struct {
	failFrom, slowFrom, stuckFrom, poolFrom float64
	// thresholds are the engine's verdicts summary.json records.
	thresholds []rundir.Threshold
}

const stageSeconds = 12

var stageStart = time.Date(2026, 11, 29, 17, 40, 0, 0, time.UTC)

// write lays the stage's run directory out as a run writes it — the
// probe's samples every 250 ms from a second before the load, the
// engine's request index and per-second points, summary.json — so that
// reports renders and judges it as it does any stage.
func (sr stageRun) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	after := func(from, at float64) bool { return from >= 0 && at >= from }
	var samples, requests, load []any
	for ms := -1000; ms <= stageSeconds*1000; ms += 250 {
		at := float64(ms) / 1000
		s := rundir.Sample{Time: stageStart.Add(time.Duration(ms) * time.Millisecond), States: rundir.StateCounts{Active: 2, Idle: 2},
			AppPool: &rundir.AppPoolSample{Max: 10, Acquired: 4, Mapping: "go_sql", Targets: 1}}
		if after(sr.poolFrom, at) {
			s.AppPool.Acquired = 10
		}
		if after(sr.stuckFrom, at) {
			s.StuckIdleInTx = 2
		}
		samples = append(samples, s)
	}
	var reqs, failures int64
	for ms := 0; ms < stageSeconds*1000; ms += 50 {
		at := float64(ms) / 1000
		r := rundir.Request{TraceID: strings.Repeat("ab", 16), Scenario: "s", Method: "tools/call", Name: "generate_report",
			Start: stageStart.Add(time.Duration(ms) * time.Millisecond), Seconds: 0.040, Outcome: rundir.RequestOK}
		if after(sr.slowFrom, at) {
			r.Seconds = 0.600
		}
		if after(sr.failFrom, at) && ms%100 == 0 {
			r.Outcome, r.Kind = rundir.RequestFailed, "http_5xx"
			failures++
		}
		reqs++
		requests = append(requests, r)
	}
	for sec := 1; sec <= stageSeconds; sec++ {
		load = append(load, rundir.LoadPoint{Time: stageStart.Add(time.Duration(sec) * time.Second), ElapsedSeconds: float64(sec), ActiveUsers: 4, Requests: 20, ReqPerSecond: 20})
	}
	writeLines(t, filepath.Join(dir, rundir.SamplesFile), samples)
	writeLines(t, filepath.Join(dir, rundir.RequestsFile), requests)
	writeLines(t, filepath.Join(dir, rundir.LoadFile), load)
	maxStuck := 0
	if sr.stuckFrom >= 0 {
		maxStuck = 2
	}
	sum := rundir.Summary{SchemaVersion: rundir.SchemaVersion, Name: "stage", Started: stageStart.Add(-time.Second), Ended: stageStart.Add(stageSeconds * time.Second),
		EndReason: rundir.EndCompleted,
		Probe:     &rundir.ProbeSummary{Samples: len(samples), IntervalSeconds: 0.25, StuckAfterSeconds: 1, MaxStuckIdleInTx: maxStuck, StuckEpisodes: maxStuck},
		Load: &rundir.LoadResult{Started: stageStart, Ended: stageStart.Add(stageSeconds * time.Second), EndReason: "completed", Requests: reqs, Failures: failures,
			Latency: map[string]rundir.LatencyStats{}, Thresholds: sr.thresholds}}
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.SummaryFile), js, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeLines(t *testing.T, path string, recs []any) {
	t.Helper()
	var b bytes.Buffer
	for _, r := range recs {
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(js, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

const onsetPlan = `
capacity:
  start: 4
  max: 64
  stage: 12s
  stuck_sessions: 0
  pool: exhausted
  error_rate: 0.05
  thresholds:
    mcp_req_duration{name:generate_report}: ["p(95)<400"]
    iteration_duration: ["p(95)<100"]
scenarios:
  s:
    executor: constant-vus
    vus: 1
    duration: 12s
    flow:
      - tools/call: {name: generate_report}
`

// judgeStage renders the stage in dir and judges it by onsetPlan's limits,
// as runStage does.
func judgeStage(t *testing.T, dir string) capreport.Stage {
	t.Helper()
	p, sp := resolveProfile(t, onsetPlan, "onset.yaml")
	pl, err := stagePlan(p.Plan, sp, 8)
	if err != nil {
		t.Fatal(err)
	}
	r, err := reports.RenderRun(dir)
	if err != nil {
		t.Fatalf("render the stage: %v", err)
	}
	clk, err := stageClock(r, pl)
	if err != nil {
		t.Fatal(err)
	}
	st := capreport.Stage{Index: 1, Load: 8, Dir: filepath.Base(dir)}
	measure(&st, r, sp.Stage)
	if err := judge(&st, sp, r, clk); err != nil {
		t.Fatal(err)
	}
	return st
}

var (
	failed  = rundir.Threshold{Metric: "mcp_req_failed", Expression: "rate<=0.05", Observed: 0.4, Samples: 240}
	slow    = rundir.Threshold{Metric: "mcp_req_duration{name:generate_report}", Expression: "p(95)<400", Observed: 600, Samples: 240}
	iterDur = rundir.Threshold{Metric: "iteration_duration", Expression: "p(95)<100", Observed: 600, Samples: 240}
)

type wantTrip struct {
	limit string
	at    float64 // -1: not recorded
}

func checkTrips(t *testing.T, st capreport.Stage, want []wantTrip) {
	t.Helper()
	var got []string
	for _, tr := range st.Trips {
		got = append(got, tr.Limit+" "+tr.When()+" — "+tr.AtBasis)
	}
	if len(st.Trips) != len(want) {
		t.Fatalf("trips:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i, w := range want {
		tr := st.Trips[i]
		ok := tr.Limit == w.limit
		if w.at < 0 {
			ok = ok && tr.AtSeconds == nil && strings.HasPrefix(tr.AtBasis, "time not recorded")
		} else {
			ok = ok && tr.AtSeconds != nil && *tr.AtSeconds == w.at
		}
		if !ok {
			t.Errorf("trip %d: %s; want %s at %g", i, got[i], w.limit, w.at)
		}
	}
}

// TestTrippedFirstIsFirstInTime: the limits a stage broke are ordered by
// when they first tripped, not by the fixed order they are judged in
// (pool, stuck sessions, thresholds): an error rate that broke 2 s into
// the stage is the limit that tripped first, though the pool (at its max
// from 9 s) is judged before it — and the search's headline, report.md,
// summary.json and junit.xml name it, with its time.
func TestTrippedFirstIsFirstInTime(t *testing.T) {
	f, s := failed, slow
	dir := stageRun{failFrom: 2, slowFrom: 5, stuckFrom: 7, poolFrom: 9, thresholds: []rundir.Threshold{s, f}}.write(t)
	st := judgeStage(t, dir)
	checkTrips(t, st, []wantTrip{
		{"mcp_req_failed rate<=0.05", 2},
		{"mcp_req_duration{name:generate_report} p(95)<400", 5},
		{"stuck sessions ≤ 0", 7},
		{"pool exhausted", 9},
	})
	if st.Held || !st.PoolExhausted {
		t.Errorf("held %v, pool exhausted %v: the fixture's pool verdict is not the one judged", st.Held, st.PoolExhausted)
	}

	// The search that broke at this stage names the earliest limit.
	held := st
	held.Index, held.Load, held.Held, held.Trips = 2, 4, true, nil
	res := capreport.Search{Name: "fixed", Unit: "users", Load: LoadUsers, Resolution: "10%", Stages: []capreport.Stage{st, held}}
	se := newSearch(Spec{Start: 8, Max: 64, Factor: 2, ResolutionAbs: 4, MaxStages: 8})
	se.Record(8, false)
	se.Record(4, true)
	conclude(&res, se)
	want := "at 8 users, mcp_req_failed rate<=0.05 tripped first at 2.0 s into the stage"
	if h := res.Headline(); !strings.Contains(h, want) || res.LimitAtSeconds == nil || *res.LimitAtSeconds != 2 {
		t.Errorf("headline %q (limit at %v); want it to say %q", h, res.LimitAtSeconds, want)
	}
	out := t.TempDir()
	if err := capreport.Write(out, &capreport.Summary{Capacity: capreport.Capacity{Searches: []capreport.Search{res}}}); err != nil {
		t.Fatal(err)
	}
	for file, wants := range map[string][]string{
		"report.md":    {want, "broke mcp_req_failed rate<=0.05 at 2.0 s into the stage (observed 0.4 over 240); mcp_req_duration"},
		"summary.json": {`"limit_at_s": 2,`, `"at_s": 9,`, `"at_basis": "samples.jsonl: the service pool at its max`},
		"junit.xml":    {"broke mcp_req_failed rate&lt;=0.05 at 2.0 s into the stage"},
	} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q:\n%s", file, w, b)
			}
		}
	}
}

// TestTripTimeNotRecorded: a limit whose time the stage did not record (a
// threshold on iteration durations, which no file keeps per second) says
// so and comes after the timed ones, whatever the order it was judged in;
// a search whose limit has no time does not call it "first".
func TestTripTimeNotRecorded(t *testing.T) {
	dir := stageRun{failFrom: -1, slowFrom: -1, stuckFrom: -1, poolFrom: 9, thresholds: []rundir.Threshold{iterDur}}.write(t)
	st := judgeStage(t, dir)
	checkTrips(t, st, []wantTrip{{"pool exhausted", 9}, {"iteration_duration p(95)<100", -1}})

	// Untimed only: judged order kept, and the headline says no time.
	dir = stageRun{failFrom: -1, slowFrom: -1, stuckFrom: -1, poolFrom: -1, thresholds: []rundir.Threshold{iterDur}}.write(t)
	st = judgeStage(t, dir)
	checkTrips(t, st, []wantTrip{{"iteration_duration p(95)<100", -1}})
	res := capreport.Search{Name: "fixed", Unit: "users", Stages: []capreport.Stage{st}}
	se := newSearch(Spec{Start: 8, Max: 64, Factor: 2, ResolutionAbs: 1, MaxStages: 8})
	se.Record(8, false)
	conclude(&res, se)
	if h := res.Headline(); !strings.Contains(h, "iteration_duration p(95)<100 tripped (time not recorded)") || strings.Contains(h, "first") {
		t.Errorf("headline %q", h)
	}
}

// TestSortTripsStable: equal and unrecorded times keep the judged order.
func TestSortTripsStable(t *testing.T) {
	at := func(v float64) *float64 { return &v }
	trips := []capreport.Trip{{Limit: "a"}, {Limit: "b", AtSeconds: at(3)}, {Limit: "c"}, {Limit: "d", AtSeconds: at(1)}, {Limit: "e", AtSeconds: at(3)}}
	capreport.SortTrips(trips)
	var got []string
	for _, tr := range trips {
		got = append(got, tr.Limit)
	}
	if strings.Join(got, "") != "dbeac" {
		t.Errorf("sorted %v; want d b e a c", got)
	}
}
