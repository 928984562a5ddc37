package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

const mergePlan = `
scenarios:
  calls:
    executor: per-vu-iterations
    vus: 7
    iterations: 4
    flow:
      - tools/call: {name: echo, arguments: {text: "u{{user}}"}}
      - ping
  rate:
    executor: constant-arrival-rate
    rate: 30
    duration: 1s
    preAllocatedVUs: 3
    maxVUs: 5
    flow: [tools/list]
thresholds:
  mcp_req_duration: ["p(95)<20", "p(50)<3", "max<100"]
  mcp_req_duration{method:tools/call,name:echo}: ["p(99)<40"]
  mcp_req_failed: ["rate<0.2"]
  iterations{scenario:calls}: ["count==28"]
  mcp_reqs{method:ping}: ["count>=28"]
`

// fakeRun records latencies and outcomes straight into an engine's
// metrics, as its users would.
type fakeRun struct {
	e  *engine
	pl *plan.Plan
}

func newFakeRun(t *testing.T, pl *plan.Plan) *fakeRun {
	cp, err := plan.Compile(pl)
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(cp, nil, RunOptions{})
	e.client.CloseIdleConnections()
	return &fakeRun{e: e, pl: pl}
}

type sample struct {
	user int
	key  seriesKey
	d    time.Duration
	err  error
}

func (f *fakeRun) record(s sample) {
	if s.key.op == opIteration {
		f.e.m.recordIteration(f.e.m.shard(s.user), s.key.scen, s.d)
		return
	}
	f.e.m.record(f.e.m.shard(s.user), s.key, s.d, s.err)
}

func (f *fakeRun) result(started time.Time) *rundir.LoadResult {
	f.e.started = started
	f.e.m.all.peak.Store(5)
	f.e.end(results.EndCompleted)
	r := f.e.result(started.Add(time.Minute))
	recorded, err := json.Marshal(f.pl)
	if err != nil {
		panic(err)
	}
	r.Plan = recorded
	return r
}

// TestMergeIsExact feeds the same samples to one engine and, split
// among N, to N engines whose series files are written, read back and
// merged: the merged result has the same counts, the same percentiles
// (one histogram fed every sample) and the same threshold verdicts.
func TestMergeIsExact(t *testing.T) {
	pl := mustParse(t, mergePlan)
	rng := rand.New(rand.NewPCG(1, 2))
	echo := func(e *engine) uint32 { return e.m.nameID("echo") }
	var samples []sample
	for range 20000 {
		u := rng.IntN(12)
		var s sample
		switch rng.IntN(4) {
		case 0:
			s = sample{u, seriesKey{scen: 0, op: opCallTool, name: 1}, time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond)), nil}
		case 1:
			s = sample{u, seriesKey{scen: 0, op: opPing}, time.Duration(rng.IntN(5000)) * time.Microsecond, nil}
		case 2:
			s = sample{u, seriesKey{scen: 1, op: opListTools}, time.Duration(rng.IntN(90_000)) * time.Microsecond, nil}
			if rng.IntN(10) == 0 {
				s.err = &mcp.Error{Kind: mcp.KindHTTP, Status: 502, Msg: "bad gateway"}
			}
		default:
			s = sample{u, seriesKey{scen: 0, op: opIteration}, time.Duration(rng.IntN(9000)) * time.Microsecond, nil}
		}
		samples = append(samples, s)
	}
	var late []time.Duration // the generator's lateness, as users record it
	for range 5000 {
		late = append(late, time.Duration(rng.ExpFloat64()*float64(2*time.Millisecond)))
	}
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	whole := newFakeRun(t, pl)
	whole.e.gen.begin(started)
	for _, d := range late {
		whole.e.gen.run.RecordValue(d.Microseconds()) //nolint:errcheck // in range
	}
	if id := echo(whole.e); id != 1 {
		t.Fatalf("echo has id %d", id)
	}
	for _, s := range samples {
		whole.record(s)
	}
	want := whole.result(started)

	for _, n := range []int{1, 3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var shards []*results.Shard
			for i := range n {
				f := newFakeRun(t, pl)
				f.e.segment = plan.Segment{Index: i, Count: n}
				echo(f.e)
				for k, s := range samples {
					if k%n == i {
						f.record(s)
					}
				}
				f.e.gen.begin(started)
				for k, d := range late {
					if k%n == i {
						f.e.gen.run.RecordValue(d.Microseconds()) //nolint:errcheck // in range
					}
				}
				dir := t.TempDir()
				r := f.result(started.Add(time.Duration(i) * time.Millisecond))
				if err := f.e.writeSeries(dir, r, time.Time{}); err != nil {
					t.Fatal(err)
				}
				sh, err := results.ReadShard(dir)
				if err != nil {
					t.Fatal(err)
				}
				shards = append(shards, sh)
			}
			got, err := results.Merge(shards, "")
			if err != nil {
				t.Fatal(err)
			}
			if got.Requests != want.Requests || got.Failures != want.Failures || got.Iterations != want.Iterations {
				t.Errorf("merged requests/failures/iterations %d/%d/%d, one process %d/%d/%d",
					got.Requests, got.Failures, got.Iterations, want.Requests, want.Failures, want.Iterations)
			}
			if !reflect.DeepEqual(got.Latency, want.Latency) {
				t.Errorf("merged latency\n%+v\none process\n%+v", got.Latency, want.Latency)
			}
			if !reflect.DeepEqual(got.IterationDuration, want.IterationDuration) {
				t.Errorf("iteration duration %+v, want %+v", got.IterationDuration, want.IterationDuration)
			}
			if !reflect.DeepEqual(got.Scenarios["rate"].ErrorsByKind, want.Scenarios["rate"].ErrorsByKind) {
				t.Errorf("errors by kind %v, want %v", got.Scenarios["rate"].ErrorsByKind, want.Scenarios["rate"].ErrorsByKind)
			}
			if len(got.Thresholds) != len(want.Thresholds) {
				t.Fatalf("%d thresholds, want %d", len(got.Thresholds), len(want.Thresholds))
			}
			for i, th := range got.Thresholds {
				w := want.Thresholds[i]
				if th.Pass != w.Pass || th.Observed != w.Observed || th.Samples != w.Samples {
					// rate thresholds over time are the only ones allowed to
					// differ (the shards' spans differ by milliseconds); none here
					t.Errorf("threshold %s %s: merged %v %v (%d), one process %v %v (%d)",
						th.Metric, th.Expression, th.Pass, th.Observed, th.Samples, w.Pass, w.Observed, w.Samples)
				}
			}
			// The shards' self-checks as one: the lateness exact, the
			// cores summed, the verdict theirs.
			if g, w := got.Generator, want.Generator; g == nil || w == nil || !reflect.DeepEqual(g.Lateness, w.Lateness) ||
				g.EngineCPUs != n*w.EngineCPUs || g.Verdict != w.Verdict || g.Lateness.Count != int64(len(late)) {
				t.Errorf("merged generator %+v, one process %+v", g, w)
			}
			if got.PeakUsers != 5*n {
				t.Errorf("peak users %d, want the shards' sum %d", got.PeakUsers, 5*n)
			}
		})
	}
}

func TestMergeRefusesAnotherPlan(t *testing.T) {
	var shards []*results.Shard
	for i, src := range []string{mergePlan, strings.Replace(mergePlan, "vus: 7", "vus: 8", 1)} {
		f := newFakeRun(t, mustParse(t, src))
		dir := t.TempDir()
		if err := f.e.writeSeries(dir, f.result(time.Now()), time.Time{}); err != nil {
			t.Fatal(err)
		}
		sh, err := results.ReadShard(dir)
		if err != nil {
			t.Fatal(i, err)
		}
		shards = append(shards, sh)
	}
	if _, err := results.Merge(shards, ""); err == nil || !strings.Contains(err.Error(), "another plan") {
		t.Fatalf("merge of two plans: %v", err)
	}
	if _, err := results.ReadShard(t.TempDir()); err == nil {
		t.Fatal("an empty directory read as a shard")
	}
}

// TestShardsAgainstOneServer plays the plan as 3 shards side by side
// against one go-sdk server: the merged counts are what the server
// received, every user index is played once, and the arrival-rate
// iterations add up to the whole schedule.
func TestShardsAgainstOneServer(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	pl := mustParse(t, mergePlan)
	const n = 3
	shards := make([]*results.Shard, n)
	errs := make([]error, n)
	startAt := time.Now().Add(300 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := RunPlan(ctx, pl, RunOptions{Target: srv.URL, RunDir: dir, Segment: plan.Segment{Index: i, Count: n}, StartAt: startAt})
			if err == nil {
				shards[i], err = results.ReadShard(dir)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, sh := range shards {
		if sh.State.Segment != fmt.Sprintf("%d/%d", i, n) || !sh.State.StartAt.Equal(startAt) || sh.State.Started.Before(startAt) {
			t.Errorf("shard %d: segment %s, start at %v, started %v", i, sh.State.Segment, sh.State.StartAt, sh.State.Started)
		}
	}
	res, err := results.Merge(shards, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	byMethod := map[string]int64{}
	texts := map[string]int{}
	for _, r := range srv.Requests() {
		byMethod[r.RPCMethod]++
		if r.RPCMethod == plan.OpCallTool {
			var args struct {
				Arguments struct{ Text string }
			}
			_ = json.Unmarshal(r.Params, &args)
			texts[args.Arguments.Text]++
		}
	}
	for _, m := range []string{plan.OpCallTool, plan.OpPing, plan.OpListTools} {
		if got := res.Latency[m].Count; got != byMethod[m] {
			t.Errorf("%s: merged %d answered, the server received %d", m, got, byMethod[m])
		}
	}
	// Each of the 7 users of calls initialized once; the server also saw
	// the shards' preflights and the rate scenario's users.
	if c := res.Scenarios["calls"]; c.Iterations != 28 || c.Requests != byMethod[plan.OpCallTool]+byMethod[plan.OpPing]+7 {
		t.Errorf("calls: %d iterations, %d requests; server: %v", c.Iterations, c.Requests, byMethod)
	}
	var users []string
	for u, k := range texts {
		users = append(users, u)
		if k != 4 {
			t.Errorf("user %s called %d times, want 4", u, k)
		}
	}
	slices.Sort(users)
	if want := []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6"}; !slices.Equal(users, want) {
		t.Errorf("users %v, want %v", users, want)
	}
	r := res.Scenarios["rate"]
	if r.Iterations+r.DroppedIterations != 30 {
		t.Errorf("rate: %d iterations + %d dropped, want the whole schedule's 30", r.Iterations, r.DroppedIterations)
	}
	if res.EndReason != results.EndCompleted || len(res.Thresholds) != 7 {
		t.Errorf("end %s, %d thresholds", res.EndReason, len(res.Thresholds))
	}

	// One process playing the whole plan against the same server did
	// what the merged shards did, and judged the count thresholds alike.
	one, err := RunPlan(context.Background(), pl, RunOptions{Target: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{plan.OpCallTool, plan.OpPing} {
		if one.Latency[m].Count != res.Latency[m].Count {
			t.Errorf("%s: one process %d, merged shards %d", m, one.Latency[m].Count, res.Latency[m].Count)
		}
	}
	o, r := one.Scenarios["rate"], res.Scenarios["rate"]
	if o.Iterations+o.DroppedIterations != r.Iterations+r.DroppedIterations || one.Scenarios["calls"].Requests != res.Scenarios["calls"].Requests {
		t.Errorf("one process %+v / %+v, merged %+v / %+v", o, one.Scenarios["calls"], r, res.Scenarios["calls"])
	}
	for i, th := range res.Thresholds {
		if strings.HasPrefix(th.Metric, threshold.MetricReqDuration) {
			continue // latencies depend on the machine's load: no timed assertion
		}
		if one.Thresholds[i].Pass != th.Pass {
			t.Errorf("threshold %s %s: one process %v, merged %v", th.Metric, th.Expression, one.Thresholds[i].Pass, th.Pass)
		}
	}
}
