package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// sseEvent is one server-sent event as a page gets it.
type sseEvent struct {
	name string
	data []byte
	at   time.Time
}

// stream reads url's events into a channel until the test ends.
func stream(t testing.TB, url string, hdr http.Header) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("GET %s: %s %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseEvent, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = []byte(strings.TrimPrefix(line, "data: "))
			case line == "" && ev.name != "":
				ev.at = time.Now()
				ch <- ev
				ev = sseEvent{}
			}
		}
	})
	t.Cleanup(func() { cancel(); _ = resp.Body.Close(); wg.Wait() })
	return ch
}

// next waits for the next event named name, skipping none.
func next(t *testing.T, ch <-chan sseEvent, name string) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("the stream ended before a %s event", name)
		}
		if ev.name != name {
			t.Fatalf("got a %s event, want %s: %s", ev.name, name, ev.data)
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s event within 5s", name)
	}
	return sseEvent{}
}

type history struct {
	Points []Point `json:"points"`
	State  State   `json:"state"`
}

type tickMsg struct {
	Point Point `json:"point"`
	State State `json:"state"`
}

func decode[T any](t *testing.T, ev sseEvent) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(ev.data, &v); err != nil {
		t.Fatalf("%s event: %v: %s", ev.name, err, ev.data)
	}
	return v
}

// fakeRun is an engine and a probe whose figures grow at every read; it
// remembers what each read returned, so a test can hold each point to
// what the live stats held at the instant it was taken.
type fakeRun struct {
	mu      sync.Mutex
	snaps   []live.Snapshot
	samples []probes.Status
}

func (f *fakeRun) snap() live.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int64(len(f.snaps) + 1)
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := range n * 10 {
		_ = h.RecordValue(1000 + i*100) // µs
	}
	s := live.Snapshot{
		Series: []live.Series{{Scenario: "s", Kind: live.KindMCP, Method: "tools/call", Name: "query",
			Requests: 10 * n, Failures: map[string]int64{"timeout": n, "http_5xx": 0}, Hist: h}},
		Scenarios: []live.Scenario{{Name: "s", VUs: 5 * n, VUsMax: 5 * n, Iterations: 3 * n, Dropped: n / 2}},
	}
	f.snaps = append(f.snaps, s)
	return s
}

func (f *fakeRun) status() probes.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.samples) + 1
	st := probes.Status{Episodes: n, StuckEpisodes: n / 2, Sample: rundir.Sample{
		Time:   time.Now(),
		States: rundir.StateCounts{Active: n, Idle: 2 * n, IdleInTx: n, IdleInTxAborted: 1}, StuckIdleInTx: n - 1,
		OldestIdleInTxSeconds: float64(n) + 0.5,
		OldestIdleInTx:        &rundir.OpenEpisode{PID: 42, AgeSeconds: float64(n), Fingerprint: "UPDATE t SET v = 'secret' WHERE id = 7", ApplicationName: "gw"},
		Apps:                  []rundir.AppConns{{Name: "gw", StateCounts: rundir.StateCounts{Active: n, IdleInTx: n}}},
		PgBouncer:             &rundir.PoolSample{ClWaiting: n},
	}, Culprits: []rundir.Culprit{{Fingerprint: "SELECT * FROM t WHERE email = 'a@secret.example'", ApplicationName: "gw", Episodes: n, TotalHoldSeconds: 2.5, MaxHoldSeconds: 1.5}},
		Warnings: []rundir.Warning{{Source: "pgbouncer", Message: "connect postgres://u:hunter2@db/x failed", Count: 1}}}
	f.samples = append(f.samples, st)
	return st
}

// startFake starts a dashboard on loopback fed by a fakeRun.
func startFake(t *testing.T, cfg Config) (*Server, *fakeRun) {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	f := &fakeRun{}
	s.Started(f.snap)
	s.Probing(f.status)
	return s, f
}

// TestStreamOneEventPerSecond: after the (empty) history a page gets one
// tick a second, numbered without a gap.
func TestStreamOneEventPerSecond(t *testing.T) {
	s, _ := startFake(t, Config{Title: "fixed"})
	ch := stream(t, s.URL()+"events", nil)
	h := decode[history](t, next(t, ch, "history"))
	if len(h.Points) != 0 {
		t.Fatalf("history at the start has %d points", len(h.Points))
	}
	var ticks []sseEvent
	for range 4 {
		ticks = append(ticks, next(t, ch, "tick"))
	}
	for i, ev := range ticks {
		p := decode[tickMsg](t, ev).Point
		if p.Seq != int64(i+1) {
			t.Errorf("tick %d has seq %d", i+1, p.Seq)
		}
		if i == 0 {
			continue
		}
		// The ticker's own spacing, read at the client: about a second
		// (a busy machine delays a read, never adds an event).
		if gap := ev.at.Sub(ticks[i-1].at); gap < 500*time.Millisecond || gap > 1500*time.Millisecond {
			t.Errorf("tick %d came %s after the one before, want about 1s", i+1, gap)
		}
		if dt := p.T - decode[tickMsg](t, ticks[i-1]).Point.T; dt < 0.9 || dt > 1.1 {
			t.Errorf("tick %d: t advanced %.3fs, want 1s", i+1, dt)
		}
	}
}

// TestStreamHistoryForLateJoiner: a page that joins after three points
// gets those three first, then the same ticks as a page there from the
// start.
func TestStreamHistoryForLateJoiner(t *testing.T) {
	s, _ := startFake(t, Config{})
	early := stream(t, s.URL()+"events", nil)
	next(t, early, "history")
	var seen []Point
	for range 3 {
		seen = append(seen, decode[tickMsg](t, next(t, early, "tick")).Point)
	}
	late := stream(t, s.URL()+"events", nil)
	h := decode[history](t, next(t, late, "history"))
	if len(h.Points) < 3 {
		t.Fatalf("a late page got %d points of history, want at least 3", len(h.Points))
	}
	for i, p := range seen {
		got, _ := json.Marshal(h.Points[i])
		want, _ := json.Marshal(p)
		if string(got) != string(want) {
			t.Errorf("history point %d:\n got %s\nwant %s", i+1, got, want)
		}
	}
	// Both pages then get the same next tick.
	for len(seen) < len(h.Points) {
		seen = append(seen, decode[tickMsg](t, next(t, early, "tick")).Point)
	}
	a, b := decode[tickMsg](t, next(t, early, "tick")), decode[tickMsg](t, next(t, late, "tick"))
	if a.Point.Seq != b.Point.Seq || a.Point.Seq != int64(len(h.Points)+1) {
		t.Errorf("after the history: early page seq %d, late page seq %d, want both %d", a.Point.Seq, b.Point.Seq, len(h.Points)+1)
	}
}

// TestStreamFiguresAreTheLiveStats: every point carries exactly what the
// engine's snapshot and the probes' status held when it was taken, and
// no secret: the probe's message is redacted, the query a fingerprint.
func TestStreamFiguresAreTheLiveStats(t *testing.T) {
	s, f := startFake(t, Config{})
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	for i := range 3 {
		// The engine's line of the second, as its clock gives it.
		s.Second(rundir.LoadPoint{Time: time.Now(), ElapsedSeconds: float64(i + 1), ReqPerSecond: 12.5, P95Ms: 7.25, EngineCores: 0.3})
		m := decode[tickMsg](t, next(t, ch, "tick"))
		f.mu.Lock()
		snap, st := f.snaps[m.Point.Seq-1], f.samples[m.Point.Seq-1]
		f.mu.Unlock()
		l, db := m.Point.Load, m.Point.DB
		sc, se := snap.Scenarios[0], snap.Series[0]
		if l.Users != sc.VUs || l.Requests != se.Requests || l.Failures != se.Failures["timeout"] ||
			l.Dropped != sc.Dropped || l.ErrorsByKind["timeout"] != se.Failures["timeout"] || len(l.ErrorsByKind) != 1 {
			t.Errorf("point %d load %+v, snapshot %+v %+v", m.Point.Seq, l, sc, se)
		}
		if l.Second == nil || l.Second.ReqPerSecond != 12.5 || l.Second.P95Ms != 7.25 {
			t.Errorf("point %d: last second %+v", m.Point.Seq, l.Second)
		}
		ser := m.State.Series[0]
		if ser.Requests != se.Requests || ser.P95Ms != float64(se.Hist.ValueAtQuantile(95))/1000 || ser.Failures["http_5xx"] != 0 {
			t.Errorf("point %d: series %+v, snapshot p95 %dµs", m.Point.Seq, ser, se.Hist.ValueAtQuantile(95))
		}
		ss := st.Sample
		if db.States != ss.States || db.IdleInTx != ss.States.IdleInTx+ss.States.IdleInTxAborted || db.Stuck != ss.StuckIdleInTx ||
			db.OldestHoldSeconds != ss.OldestIdleInTxSeconds || db.PgBouncer.Waiting != ss.PgBouncer.ClWaiting ||
			len(db.Apps) != 1 || db.Apps[0].IdleInTx != ss.Apps[0].IdleInTx || m.State.Episodes != st.Episodes {
			t.Errorf("point %d db %+v, sample %+v", m.Point.Seq, db, ss)
		}
		if c := m.State.Culprits; len(c) != 1 || c[0].Episodes != st.Culprits[0].Episodes || c[0].MaxHoldSeconds != 1.5 {
			t.Errorf("point %d culprits %+v, status %+v", m.Point.Seq, c, st.Culprits)
		}
		for _, secret := range []string{"hunter2", "secret", "= 7"} {
			if strings.Contains(m.State.Oldest.Fingerprint+m.State.Warnings[0].Message+m.State.Culprits[0].Fingerprint, secret) {
				t.Errorf("point %d shows %q: %+v %+v", m.Point.Seq, secret, m.State.Oldest, m.State.Warnings)
			}
		}
	}
}

// TestStreamWaitsForASource: nothing is sent while the stack starts (no
// engine and no probe yet).
func TestStreamWaitsForASource(t *testing.T) {
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	select {
	case ev := <-ch:
		t.Fatalf("a %s event with no source: %s", ev.name, ev.data)
	case <-time.After(1500 * time.Millisecond):
	}
}

// TestStaleSecondIsNotShown: the engine's sliver of a last line, and its
// last line once the load is over, are not shown as the current second.
func TestStaleSecondIsNotShown(t *testing.T) {
	s, _ := startFake(t, Config{Every: time.Hour}) // the test ticks
	now := time.Now()
	s.Second(rundir.LoadPoint{Time: now, ElapsedSeconds: 10, ReqPerSecond: 50})
	s.Second(rundir.LoadPoint{Time: now, ElapsedSeconds: 10.01, ReqPerSecond: 22000})
	s.tick(now.Add(time.Second))
	s.tick(now.Add(2 * time.Second))
	var p1, p2 Point
	_ = json.Unmarshal(s.history[0], &p1)
	_ = json.Unmarshal(s.history[1], &p2)
	if p1.Load.Second == nil || p1.Load.Second.ReqPerSecond != 50 {
		t.Errorf("a second after the last line: %+v, want its 50 req/s", p1.Load.Second)
	}
	if p2.Load.Second != nil {
		t.Errorf("two seconds after the last line: %+v, want none", p2.Load.Second)
	}
}

// TestStalledPageIsDropped: a page that stops reading is dropped once
// clientBuffer events wait for it, so its backlog never grows; the
// points go on, and a page that reads keeps getting them.
func TestStalledPageIsDropped(t *testing.T) {
	s, _ := startFake(t, Config{Every: time.Hour}) // the test ticks
	stalled, _, _ := s.subscribe()                 // never read
	reading := stream(t, s.URL()+"events", nil)
	next(t, reading, "history")
	for i := range clientBuffer + 2 {
		s.tick(time.Now())
		if p := decode[tickMsg](t, next(t, reading, "tick")).Point; p.Seq != int64(i+1) {
			t.Fatalf("the reading page got seq %d, want %d", p.Seq, i+1)
		}
	}
	select {
	case <-stalled.gone:
	default:
		t.Fatal("the stalled page was not dropped")
	}
	s.mu.Lock()
	_, kept := s.clients[stalled]
	n := len(s.clients)
	s.mu.Unlock()
	if kept || n != 1 || len(stalled.ch) > clientBuffer {
		t.Errorf("after the stall: stalled kept %v, %d pages, backlog %d", kept, n, len(stalled.ch))
	}
}

// TestHourWithPageOpen: an hour of points (3,600 ticks, taken at once)
// with a page open and reading grows the process's heap by the history
// alone — the page itself keeps nothing.
func TestHourWithPageOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("3,600 ticks; skipped with -short")
	}
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", Every: time.Hour}) // the test ticks
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hdrhistogram.New(1, 60_000_000, 3)
	_ = h.RecordValue(1500)
	var n int64
	s.Started(func() live.Snapshot {
		n++
		return live.Snapshot{
			Series:    []live.Series{{Scenario: "s", Kind: live.KindMCP, Method: "tools/call", Name: "q", Requests: 10 * n, Hist: h}},
			Scenarios: []live.Scenario{{Name: "s", VUs: 50}},
		}
	})
	page := stream(t, s.URL()+"events", nil)
	next(t, page, "history")
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for range 3600 {
		s.tick(time.Now())
		next(t, page, "tick") // the page reads each point as it comes
	}
	after := heap()
	s.mu.Lock()
	kept := 0
	for _, p := range s.history {
		kept += len(p) + 24 // the bytes and their slice header
	}
	pages := len(s.clients)
	s.mu.Unlock()
	grown := int64(after) - int64(before)
	t.Logf("an hour of points: heap %+d bytes, history %d bytes (%d a point)", grown, kept, kept/3600)
	if pages != 1 {
		t.Errorf("%d pages connected, want the 1 that read", pages)
	}
	// The history's slice doubles as it grows: up to twice its headers,
	// plus 1 MiB for the runtime's own noise.
	if limit := int64(kept) + 3600*24 + 1<<20; grown > limit {
		t.Errorf("the heap grew by %d bytes over an hour of points, more than the history's %d (limit %d)", grown, kept, limit)
	}
}
