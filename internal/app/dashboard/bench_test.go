//go:build linux

package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/live"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkDashboardCost measures what the dashboard costs a run, two
// ways, in one run.
//
// Side by side: the engine plays LEAKBENCH_DASH_USERS users (3,000) for
// LEAKBENCH_DASH_SECONDS (6) against a helper process, alone and then
// with the dashboard reading it and a page's stream held open, in turn,
// LEAKBENCH_DASH_ROUNDS times (2) after a warm-up run: alternated, so
// that the machine's drift (other processes on shared cores) falls on
// both alike. Reported:
// the process's CPU per request alone and watched, and the ratio's
// excess (watched-extra-%). The helper serves in its own process, so the
// CPU is the engine's and the dashboard's only.
//
// The tick alone: then a tick — reading the 3,000-user engine's
// snapshot, encoding the point and state, queueing it for the page held
// open — is timed b.N times, the dashboard's whole work for one second:
// tick-cpu-µs, and dashboard-% (one tick a second over the engine's CPU
// per second). That is the precise figure; the side-by-side one carries
// the shared machine's noise.
//
// The live join (livejoin.go) is part of the tick: the ticks read a
// request index that grows by one second of the watched run's requests
// before each (about 230 bytes a line, ~3,000 lines at 3,000 users, as
// the engine writes requests.jsonl), with a probe whose stuck episodes
// are 32, two new each second, their requests among the lines. Writing
// the lines is the engine's cost, not the dashboard's: its CPU is
// measured around each write and taken out of tick-cpu-µs. The file is
// cut every reqRotate ticks, so an hour's benchmark stays small on disk
// (the tail starts again, as for a file replaced); the window is filled
// to its bound before the heap is first measured.
// LEAKBENCH_DASH_REQUESTS=0 leaves the join out.
//
// Memory: the heap after the b.N ticks against before them, per point,
// beside the history's own bytes per point. With the page held open for
// -benchtime=3600x (an hour of points), heap-B/point ≈ history-B/point
// (plus the history slice's spare capacity) says the page itself holds
// nothing that grows: its stream's buffer is clientBuffer events.
func BenchmarkDashboardCost(b *testing.B) {
	users, secs, rounds := envInt("LEAKBENCH_DASH_USERS", 3000), envInt("LEAKBENCH_DASH_SECONDS", 6), envInt("LEAKBENCH_DASH_ROUNDS", 2)
	helper := mcptest.StartHelper(b, mcptest.HelperCanned)
	p, err := scenariofile.Parse(fmt.Appendf(nil, "scenarios:\n  s: {executor: constant-vus, vus: %d, duration: %ds, flow: [ping, think: 1s]}\n", users, secs), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	page := stream(b, s.URL()+"events", nil) // a page held open for the whole benchmark
	go func() {
		for range page { // the browser: reads every event until the stream ends
		}
	}()

	// A first run warms the helper, the connections' pools and the
	// heap, and counts for neither side; then the rounds alternate
	// their order (alone, watched; watched, alone; …), so that neither
	// side always plays first.
	(&load{}).add(b, p, helper.URL, nil, users)
	var alone, watched load
	kept := &keptSnap{Server: s}
	for r := range rounds {
		playAlone := func() {
			s.Part("") // the dashboard lets go of the last run: it reads nothing while the engine plays alone
			alone.add(b, p, helper.URL, nil, users)
		}
		playWatched := func() { watched.add(b, p, helper.URL, kept, users) }
		if r%2 == 0 {
			playAlone()
			playWatched()
		} else {
			playWatched()
			playAlone()
		}
	}

	s.Started(kept.snap) // the ticks read the last watched run's engine
	var idx *reqFeed
	if os.Getenv("LEAKBENCH_DASH_REQUESTS") != "0" {
		idx = newReqFeed(b, s, int(float64(watched.requests)/watched.wall.Seconds()))
		for range windowLines/idx.perTick + 2 { // the window at its bound
			idx.write()
			s.tick(time.Now())
		}
	}
	m0 := settledHeap()
	hist0 := historyBytes(s)
	var feedCPU time.Duration
	cpuTicks := procstat.Self()
	b.ResetTimer()
	for b.Loop() {
		if idx != nil {
			c := procstat.Self()
			idx.write()
			feedCPU += procstat.Self() - c
		}
		s.tick(time.Now())
		// The page's handler writes the point out before the next: a
		// page that fell behind would be dropped and not measured.
		for queued(s) > 0 {
			runtime.Gosched()
		}
	}
	b.StopTimer()
	// CPU, not wall time: on a shared machine other processes stretch the
	// wall clock; the process's CPU over the ticks is the dashboard's own
	// (the page reading here included, which a browser would not cost).
	tick := float64(procstat.Self()-cpuTicks-feedCPU) / float64(b.N)
	m1 := settledHeap()
	hist1 := historyBytes(s)
	s.mu.Lock()
	points, clients := len(s.history), len(s.clients)
	s.mu.Unlock()
	if clients != 1 {
		b.Errorf("%d pages connected at the end, want the 1 held open", clients)
	}
	b.ReportMetric(float64(users), "users")
	if idx != nil {
		b.ReportMetric(float64(idx.perTick), "req-lines/tick")
		s.live.mu.Lock()
		joined := 0
		for _, l := range s.live.last {
			if l.Request != nil {
				joined++
			}
		}
		s.live.mu.Unlock()
		if joined == 0 {
			b.Errorf("the live join named no request of the stuck episodes")
		}
	}
	b.ReportMetric(alone.usPerReq(), "cpu-µs/req-alone")
	b.ReportMetric(watched.usPerReq(), "cpu-µs/req-watched")
	b.ReportMetric(100*(watched.usPerReq()/alone.usPerReq()-1), "watched-extra-%")
	b.ReportMetric(watched.cpuPerSec()/1e6, "engine-cpu-ms/s")
	b.ReportMetric(tick/1e3, "tick-cpu-µs")
	b.ReportMetric(100*tick/watched.cpuPerSec(), "dashboard-%")
	b.ReportMetric(float64(hist1)/float64(points), "history-B/point")
	b.ReportMetric(float64(int64(m1)-int64(m0))/float64(b.N), "heap-B/point")
	b.ReportMetric(float64(hist1-hist0)/float64(b.N), "history-growth-B/point")
	b.ReportMetric(0, "ns/op")
}

// keptSnap is the server as the engine's watcher, keeping the engine's
// snapshot so the ticks can read it after a run alone let it go.
type keptSnap struct {
	*Server
	snap func() live.Snapshot
}

func (k *keptSnap) Started(snap func() live.Snapshot) {
	k.snap = snap
	k.Server.Started(snap)
}

// load sums the runs of one side of the comparison.
type load struct {
	cpu      time.Duration // the process's CPU over the runs
	wall     time.Duration
	requests int64
}

// add plays the plan once, watched by w unless nil, and adds its CPU,
// time and requests.
func (l *load) add(b *testing.B, p *plan.Plan, target string, w engine.Watcher, users int) {
	b.Helper()
	o := engine.RunOptions{Target: target}
	if w != nil {
		o.Watch = w
	}
	cpu0, t0 := procstat.Self(), time.Now()
	res, err := engine.RunPlan(context.Background(), p, o)
	if err != nil {
		b.Fatal(err)
	}
	l.cpu += procstat.Self() - cpu0
	l.wall += time.Since(t0)
	l.requests += res.Requests
	if res.PeakUsers < users {
		b.Fatalf("the engine reached %d users of %d", res.PeakUsers, users)
	}
}

func (l *load) usPerReq() float64  { return float64(l.cpu) / 1e3 / float64(l.requests) }
func (l *load) cpuPerSec() float64 { return float64(l.cpu) / l.wall.Seconds() } // ns of CPU per second

// settledHeap is the live heap's bytes once what the runs left is gone:
// two collections, since sync.Pool's contents survive the first (as its
// victim cache) and the engine's 3,000 users leave buffers in pools.
func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// historyBytes is the history's points' bytes.
func historyBytes(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range s.history {
		n += len(h)
	}
	return n
}

// queued is how many events wait for the pages' handlers.
func queued(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.clients {
		n += len(c.ch)
	}
	return n
}

// reqRotate is how many ticks' lines a benchmark's request index holds
// before it is cut.
const reqRotate = 64

// reqFeed plays the engine's side of the live join: a request index
// growing by perTick lines a tick, and a probe whose stuck episodes are
// some of those lines' requests.
type reqFeed struct {
	b       testing.TB
	file    *os.File
	perTick int
	ticks   int
	line    int // lines written so far: each its own trace id
	buf     []byte
	probe   fakeProbe
}

func newReqFeed(b testing.TB, s *Server, perTick int) *reqFeed {
	file := filepath.Join(b.TempDir(), rundir.RequestsFile)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	r := &reqFeed{b: b, file: f, perTick: max(perTick, 1)}
	s.Requests(file)
	s.Probing(r.probe.status)
	return r
}

// write appends a second's lines in one write(2), as the engine's flush
// does, and makes two of them stuck episodes' requests.
func (r *reqFeed) write() {
	if r.ticks++; r.ticks%reqRotate == 0 {
		if err := r.file.Truncate(0); err != nil {
			r.b.Fatal(err)
		}
	}
	r.buf = r.buf[:0]
	first := r.line
	for range r.perTick {
		// By hand, as reqindex does: the feed allocates nothing, so no
		// collection it causes falls on the ticks.
		b := append(r.buf, `{"trace_id":"`...)
		b = appendHex(b, uint64(r.line+1), 32)
		b = append(b, `","user":`...)
		b = strconv.AppendInt(b, int64(r.line%3000), 10)
		b = append(b, `,"scenario":"s","iteration":`...)
		b = strconv.AppendInt(b, int64(r.line/3000), 10)
		b = append(b, `,"step":0,"method":"tools/call","name":"ping","start":"2026-12-04T09:00:00.123456789Z","seconds":0.001234,"outcome":"ok","span_id":"`...)
		b = appendHex(b, uint64(r.line), 16)
		r.buf = append(b, "\"}\n"...)
		r.line++
	}
	if _, err := r.file.Write(r.buf); err != nil {
		r.b.Fatal(err)
	}
	r.probe.mu.Lock()
	st := r.probe.stuck
	for _, n := range []int{first, first + r.perTick/2} {
		st = append(st, probes.StuckTrace{TraceID: fmt.Sprintf("%032x", n+1), PID: int32(n), HoldSeconds: float64(r.ticks), Open: true,
			Fingerprint: "SELECT * FROM t WHERE id = $1"})
	}
	r.probe.stuck = st[max(len(st)-32, 0):]
	r.probe.mu.Unlock()
}

// appendHex appends n in hex, zero-padded to width digits.
func appendHex(b []byte, n uint64, width int) []byte {
	var d [16]byte
	h := strconv.AppendUint(d[:0], n, 16)
	for range width - len(h) {
		b = append(b, '0')
	}
	return append(b, h...)
}
