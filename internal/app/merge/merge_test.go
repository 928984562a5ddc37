package merge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

const planYAML = `
target: http://127.0.0.1:1/mcp
scenarios:
  agents:
    executor: constant-vus
    vus: 3000
    duration: 30m
    flow: [ping, {tools/call: {name: echo, arguments: {text: x}}}, {think: 1s}]
thresholds:
  mcp_req_duration: ["p(95)<500"]
`

// writeShard writes a synthetic shard's run directory: series.json,
// histograms.hlog and load.jsonl of a run of length d at rate req/s, with
// lognormal latencies.
func writeShard(tb testing.TB, dir string, seg plan.Segment, p *plan.Plan, started time.Time, d time.Duration, rate int, seed uint64) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	methods := []string{"initialize", "ping", "tools/call", "DELETE", "iteration"}
	recorded, err := json.Marshal(p)
	if err != nil {
		tb.Fatal(err)
	}
	st := &rundir.SeriesState{Segment: seg.String(), Plan: recorded, Started: started, Ended: started.Add(d), EndReason: results.EndCompleted,
		PeakUsers: 1000, MinUsers: 990, ErrorSamples: []string{}}
	var hists []*hdrhistogram.Histogram
	total := int64(d.Seconds()) * int64(rate)
	for i, m := range methods {
		h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
		n := total / 2
		if m == "initialize" || m == "DELETE" {
			n = 1000
		}
		for range n {
			h.RecordValue(int64(min(rng.NormFloat64()*0.8+8, 21)) + int64(rng.ExpFloat64()*2000)) //nolint:errcheck
		}
		name := ""
		if m == "tools/call" {
			name = "echo"
		}
		st.Series = append(st.Series, rundir.SeriesCounts{Tag: fmt.Sprintf("s%d", i), Scenario: "agents", Method: m, Name: name, Requests: n})
		hists = append(hists, h)
	}
	st.Scenarios = []rundir.ScenarioCounts{{Name: "agents", Requests: total + 2000, Iterations: total / 2, PeakUsers: 1000, MinUsers: 990}}
	raw, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, rundir.SeriesFile), raw, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := results.WriteHistogramLog(filepath.Join(dir, rundir.HistogramsFile), st, hists); err != nil {
		tb.Fatal(err)
	}
	var load strings.Builder
	for s := range int(d.Seconds()) {
		pt, _ := json.Marshal(rundir.LoadPoint{Time: started.Add(time.Duration(s+1) * time.Second), ElapsedSeconds: float64(s + 1),
			ActiveUsers: 1000, Requests: int64(rate), ReqPerSecond: float64(rate), P50Ms: 2, P95Ms: 9, P99Ms: 20})
		load.Write(pt)
		load.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.LoadFile), []byte(load.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// shardsStart is when the test shards' runs start.
var shardsStart = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// writeShards writes the n synthetic shards (writeShard) of one run of
// length d at 10 req/s each under root/0 … root/n-1 and returns their
// directories.
func writeShards(tb testing.TB, root string, n int, d time.Duration) []string {
	tb.Helper()
	p := parsePlan(tb)
	dirs := make([]string, n)
	for i := range n {
		dirs[i] = filepath.Join(root, fmt.Sprint(i))
		writeShard(tb, dirs[i], plan.Segment{Index: i, Count: n}, p, shardsStart, d, 10, uint64(i))
	}
	return dirs
}

func parsePlan(tb testing.TB) *plan.Plan {
	p, err := scenariofile.Parse([]byte(planYAML), "p.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestRunNamesProblems(t *testing.T) {
	p := parsePlan(t)
	root := t.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	dirs := []string{}
	for i, off := range []time.Duration{0, time.Second, 40 * time.Second} { // shard 2 late
		d := filepath.Join(root, fmt.Sprint(i))
		writeShard(t, d, plan.Segment{Index: i, Count: 5}, p, t0.Add(off), 10*time.Second, 10, uint64(i))
		dirs = append(dirs, d)
	}
	dup := filepath.Join(root, "dup")
	writeShard(t, dup, plan.Segment{Index: 1, Count: 5}, p, t0, 10*time.Second, 10, 9)
	failed := filepath.Join(root, "failed")
	writeShard(t, failed, plan.Segment{Index: 3, Count: 5}, p, t0, 10*time.Second, 10, 3)
	raw, _ := os.ReadFile(filepath.Join(failed, rundir.SeriesFile))
	_ = os.WriteFile(filepath.Join(failed, rundir.SeriesFile), []byte(strings.Replace(string(raw), `"end_reason":"completed"`, `"end_reason":"interrupted"`, 1)), 0o644)
	other := filepath.Join(root, "other") // shard 0/5 of another run
	writeShard(t, other, plan.Segment{Index: 0, Count: 5}, p, t0, 10*time.Second, 10, 8)
	raw, _ = os.ReadFile(filepath.Join(other, rundir.SeriesFile))
	_ = os.WriteFile(filepath.Join(other, rundir.SeriesFile), []byte(strings.Replace(string(raw), `"started"`, `"start_at":"2026-11-30T09:00:00Z","started"`, 1)), 0o644)
	empty := filepath.Join(root, "empty")
	_ = os.MkdirAll(empty, 0o755)
	dirs = append(dirs, dup, failed, empty)
	dirs[0], other = other, dirs[0] // the stale 0/5 comes first; the real one is a duplicate then
	dirs = append(dirs, other)

	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out"), Wait: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, pr := range out.Problems {
		got = append(got, pr.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"shard 1/5 (" + dup + "): played twice", "shard 3/5 (" + failed + "): its load ended interrupted",
		"shard 4/5: missing", empty + ": no results", "shard 0/5 (" + dirs[0] + "): from another run: --start-at 2026-11-30T09:00:00Z, the others' is none", "shard 2/5 (" + dirs[2] + "): late: its load started 40s after the first shard"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if out.Passed() || out.Merged != 4 || out.Summary.EndReason != rundir.EndFailed || !strings.Contains(out.Summary.Error, "merged 4 of 5 shards") {
		t.Errorf("passed %v, merged %d, summary %s %q", out.Passed(), out.Merged, out.Summary.EndReason, out.Summary.Error)
	}
	if _, err := merge.Run(context.Background(), merge.Options{Dirs: []string{empty}, Out: filepath.Join(root, "out2")}); err == nil {
		t.Error("a merge of nothing did not fail")
	}
}

// BenchmarkMerge100Shards merges 100 synthetic shards of 30-minute runs at
// 1,000 req/s each (1.8 million requests a shard, 180 million in all).
func BenchmarkMerge100Shards(b *testing.B) {
	p := parsePlan(b)
	root := b.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var dirs []string
	for i := range 100 {
		d := filepath.Join(root, fmt.Sprint(i))
		writeShard(b, d, plan.Segment{Index: i, Count: 100}, p, t0.Add(time.Duration(i)*time.Millisecond), 30*time.Minute, 1000, uint64(i))
		dirs = append(dirs, d)
	}
	n := 0
	for _, render := range []bool{false, true} {
		name := "merge"
		if render {
			name = "merge+report" // as leakbench merge does: report.md, report.html, plots
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				n++
				dir := filepath.Join(root, fmt.Sprint("out", n))
				out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: dir})
				if err != nil || len(out.Problems) > 0 || out.Summary.Load.Requests != 100*(1800*1000+2000) {
					b.Fatalf("%v %v %+v", err, out.Problems, out.Summary.Load)
				}
				if render {
					if _, err := reports.RenderRun(dir); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// The probe of the lowest shard that had one is the merged run's.
func TestRunCarriesTheProbe(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 5*time.Second)
	sum := rundir.Summary{SchemaVersion: rundir.SchemaVersion, Name: "shard", EndReason: rundir.EndCompleted, Probe: &rundir.ProbeSummary{}}
	raw, _ := json.Marshal(sum)
	if err := os.WriteFile(filepath.Join(dirs[1], rundir.SummaryFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs[1], rundir.SamplesFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out")})
	if err != nil || len(out.Problems) > 0 {
		t.Fatal(err, out.Problems)
	}
	if out.Summary.Probe == nil {
		t.Error("the merged run lost the probe")
	}
	if _, err := os.Stat(filepath.Join(root, "out", rundir.SamplesFile)); err != nil {
		t.Error(err)
	}
}

// TestMergeLoadLongLine: the shards' load.jsonl are read by the one jsonl
// reader: a line longer than 1 MiB (bufio.Scanner's old cap here) is read
// and the seconds after it are merged, all requests counted.
func TestMergeLoadLongLine(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 10*time.Second)
	path := filepath.Join(dirs[0], rundir.LoadFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	// A second's point with a field of 2 MiB that the reader ignores.
	long := strings.Replace(lines[3], "{", `{"note":"`+strings.Repeat("x", 2<<20)+`",`, 1)
	lines[3] = long
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	if _, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: out}); err != nil {
		t.Fatalf("merge with a 2 MiB line in a shard's %s: %v", rundir.LoadFile, err)
	}
	var requests int64
	points := 0
	for _, p := range readLoad(t, filepath.Join(out, rundir.LoadFile)) {
		requests += p.Requests
		points++
	}
	if requests != 2*10*10 || points != 10 {
		t.Errorf("merged load: %d requests in %d seconds, want 200 in 10", requests, points)
	}
}

func readLoad(t *testing.T, path string) []rundir.LoadPoint {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []rundir.LoadPoint
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var p rundir.LoadPoint
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, p)
	}
	return out
}

// TestRunCarriesScaleChanges: each shard's changes of users by hand
// (its own dashboard's) are in the merged load.jsonl's seconds and in the
// merged summary, in time order.
func TestRunCarriesScaleChanges(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 5*time.Second)
	late := rundir.ScaleChange{Time: shardsStart.Add(3500 * time.Millisecond), ElapsedSeconds: 3.5, Scenario: "agents", From: 10, To: 20, By: "page"}
	early := rundir.ScaleChange{Time: shardsStart.Add(1500 * time.Millisecond), ElapsedSeconds: 1.5, Scenario: "agents", From: 10, To: 30, By: "command"}
	for i, ch := range []rundir.ScaleChange{late, early} {
		pt, _ := json.Marshal(rundir.LoadPoint{Time: ch.Time, ElapsedSeconds: ch.ElapsedSeconds, Scale: []rundir.ScaleChange{ch}})
		f, err := os.OpenFile(filepath.Join(dirs[i], rundir.LoadFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(append(pt, '\n'))
		f.Close()
	}
	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out")})
	if err != nil || len(out.Problems) > 0 {
		t.Fatal(err, out.Problems)
	}
	if got := out.Summary.Load.ScaleChanges; len(got) != 2 || !got[0].Time.Equal(early.Time) || !got[1].Time.Equal(late.Time) {
		t.Errorf("merged changes %+v, want the early one, then the late one", got)
	}
	load, _ := os.ReadFile(filepath.Join(root, "out", rundir.LoadFile))
	if n := strings.Count(string(load), `"by":`); n != 2 {
		t.Errorf("merged load.jsonl holds %d changes, want 2", n)
	}
}
