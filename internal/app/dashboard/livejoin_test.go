package dashboard

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
)

// trace is the n-th test trace id, as requests.jsonl writes it.
func trace(n int) string { return fmt.Sprintf("%032x", n+1) }

// reqLine is a request index line as reqindex writes it.
func reqLine(n int, method, name, outcome string) string {
	return fmt.Sprintf(`{"trace_id":"%s","user":%d,"scenario":"agents","iteration":%d,"step":0,"method":"%s","name":"%s","start":"2026-12-04T09:00:00Z","seconds":0.25,"outcome":"%s"}`+"\n",
		trace(n), n, n*10, method, name, outcome)
}

// appendFile appends s to file, creating it.
func appendFile(t *testing.T, file, s string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReqTail: the tail takes each whole line once, as the file grows —
// none before the file exists, a partial last line only once it is
// whole, a line too long skipped — keeps the recent lines' trace ids and
// reads a line back by them, and forgets them by age and past its bound.
func TestReqTail(t *testing.T) {
	file := filepath.Join(t.TempDir(), rundir.RequestsFile)
	tl := newReqTail(file)
	defer tl.close()
	now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	var got []string
	poll := func() {
		t.Helper()
		got = got[:0]
		if err := tl.poll(now, func(tr [16]byte, line []byte) {
			if !strings.Contains(string(line), hex.EncodeToString(tr[:])) {
				t.Errorf("line %s handed with trace %x", line, tr)
			}
			got = append(got, string(line))
		}); err != nil {
			t.Fatal(err)
		}
	}
	poll() // no file yet
	if len(got) != 0 || tl.off != 0 {
		t.Fatalf("a missing file gave %q at %d", got, tl.off)
	}

	l0, l1, l2 := reqLine(0, "tools/call", "a", "ok"), reqLine(1, "tools/call", "b", "failed"), reqLine(2, "initialize", "", "ok")
	appendFile(t, file, l0+l1[:20]) // one line and a partial one
	poll()
	if len(got) != 1 || got[0]+"\n" != l0 {
		t.Fatalf("after one line and a part: %q", got)
	}
	poll() // nothing new
	if len(got) != 0 {
		t.Fatalf("a poll with nothing new gave %q", got)
	}
	long := `{"trace_id":"` + trace(9) + `","name":"` + strings.Repeat("x", 2*maxLine) + "\"}\n"
	appendFile(t, file, l1[20:]+long[:maxLine+100])
	poll()
	if len(got) != 1 || got[0]+"\n" != l1 {
		t.Fatalf("after the rest of the line and a long part: %q", got)
	}
	appendFile(t, file, long[maxLine+100:]+l2)
	poll()
	if len(got) != 1 || got[0]+"\n" != l2 {
		t.Fatalf("after the long line's end and a line: %q (the long one must be skipped)", got)
	}
	if fi, _ := os.Stat(file); tl.off != fi.Size() {
		t.Errorf("offset %d, file %d bytes", tl.off, fi.Size())
	}
	// The window: l0, l1 and l2, each read back from its offset.
	for i, want := range []string{l0, l1, l2} {
		var tr [16]byte
		_, _ = hex.Decode(tr[:], []byte(trace(i)))
		off, ok := tl.win.find([]uint64{traceKeyOf(tr)})[traceKeyOf(tr)]
		if !ok || string(tl.lineAt(off))+"\n" != want {
			t.Errorf("window's line %d: at %d (%v): %q", i, off, ok, tl.lineAt(off))
		}
	}
	// Age: lines read more than windowAge ago are forgotten.
	now = now.Add(windowAge + time.Second)
	appendFile(t, file, reqLine(3, "tools/call", "c", "ok"))
	poll()
	if f := tl.win.find([]uint64{1, 2, 3, 4}); tl.win.n != 1 || len(f) != 1 || f[4] == 0 {
		t.Errorf("after windowAge the window holds %d lines, finds %v; want the new one only (trace 3's)", tl.win.n, f)
	}
	// A file cut (its run directory made again) is read from its start.
	if err := os.Truncate(file, 0); err != nil {
		t.Fatal(err)
	}
	appendFile(t, file, l1)
	poll()
	if len(got) != 1 || got[0]+"\n" != l1 || tl.off != int64(len(l1)) || tl.win.n != 1 {
		t.Errorf("after the file was cut: %q at %d, window of %d", got, tl.off, tl.win.n)
	}

	// The bound: past windowLines the oldest go first.
	var w reqWindow
	const total = 101 + windowLines + 5
	for i := range total {
		var tr [16]byte
		tr[13], tr[14], tr[15] = byte(i>>16), byte(i>>8), byte(i)
		w.add(tr, int64(i), now)
		if i == 100 {
			w.expire(now.Add(windowAge + time.Second)) // empties it mid-way: the ring wraps
			if w.n != 0 {
				t.Fatalf("expired window holds %d", w.n)
			}
		}
	}
	if w.n != windowLines || len(w.ring) != windowLines {
		t.Errorf("window of %d lines, ring %d; want %d", w.n, len(w.ring), windowLines)
	}
	oldest := w.ring[w.head]
	if want := int64(total - windowLines); oldest.off != want {
		t.Errorf("oldest line kept is %d, want %d", oldest.off, want)
	}
	for i := range w.n {
		if e := w.ring[(w.head+i)%len(w.ring)]; e.off != oldest.off+int64(i) {
			t.Fatalf("the window's %d-th line is %d, want %d: out of order", i, e.off, oldest.off+int64(i))
		}
	}
	// Found: a kept line, not an evicted one; a trace's latest line.
	var tr [16]byte
	tr[15] = 7            // line 7's trace, evicted; written again as the newest
	w.add(tr, total, now) // evicts line total-windowLines
	const kept = total - windowLines + 1
	f := w.find([]uint64{uint64(total - 1), uint64(kept), 7, uint64(kept - 1)})
	if len(f) != 3 || f[uint64(total-1)] != total-1 || f[7] != total || f[uint64(kept)] != kept {
		t.Errorf("found %v: want the newest, the oldest kept and 7's latest line, not the one evicted", f)
	}
}

// fakeProbe is a probe whose stuck episodes a test sets.
type fakeProbe struct {
	mu    sync.Mutex
	stuck []probes.StuckTrace
}

func (f *fakeProbe) set(s ...probes.StuckTrace) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stuck = s
}

func (f *fakeProbe) status() probes.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return probes.Status{Stuck: append([]probes.StuckTrace(nil), f.stuck...), StuckEpisodes: len(f.stuck)}
}

// TestLiveLeftBy: while the run plays, a stuck episode's request reaches
// the page's state and its stream, whether its line was written before
// the episode turned stuck or after (in two parts); the query stays a
// fingerprint; a sign-off's before side keeps its rows while after
// plays; Finish's forensics replace them.
func TestLiveLeftBy(t *testing.T) {
	dir := t.TempDir()
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", Every: time.Hour}) // ticks by hand
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ch := stream(t, s.URL()+"events", nil)
	next(t, ch, "history")
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	tick := func(n int) State {
		t.Helper()
		s.tick(t0.Add(time.Duration(n) * time.Second))
		return decode[tickMsg](t, next(t, ch, "tick")).State
	}

	before := filepath.Join(dir, "before", rundir.RequestsFile)
	if err := os.MkdirAll(filepath.Dir(before), 0o755); err != nil {
		t.Fatal(err)
	}
	fp := &fakeProbe{}
	w := s.Part("before")
	w.Requests(before)
	w.Probing(fp.status)
	if st := tick(1); st.LeftBy != nil { // no file, nothing stuck
		t.Fatalf("left by %+v before anything was stuck", st.LeftBy)
	}
	// Request 0's line comes before its episode is stuck; 1's after.
	appendFile(t, before, reqLine(0, "tools/call", "generate_report", "aborted")+reqLine(5, "tools/list", "", "ok"))
	if st := tick(2); st.LeftBy != nil {
		t.Fatalf("left by %+v with nothing stuck", st.LeftBy)
	}
	q := "SELECT * FROM tokens WHERE email = 'ann@example.com'"
	fp.set(probes.StuckTrace{TraceID: trace(0), PID: 7, HoldSeconds: 2, Open: true, Fingerprint: q},
		probes.StuckTrace{TraceID: trace(1), PID: 8, HoldSeconds: 1.5, EndReason: rundir.EndTimeout, Fingerprint: q})
	st := tick(3)
	if len(st.LeftBy) != 2 {
		t.Fatalf("left by %+v: want both stuck episodes", st.LeftBy)
	}
	a, b := st.LeftBy[0], st.LeftBy[1]
	if r := a.Request; a.TraceID != trace(0) || a.Run != "before" || a.EndReason != "open" || a.JoinedBy != rundir.JoinedByTrace ||
		r == nil || r.User != 0 || r.Name != "generate_report" || r.Outcome != "aborted" || r.Seconds != 0.25 {
		t.Errorf("the open episode %+v, request %+v: want request 0's", a, a.Request)
	}
	if b.TraceID != trace(1) || b.Request != nil || b.EndReason != rundir.EndTimeout {
		t.Errorf("the episode whose request is not written yet: %+v", b)
	}
	l1 := reqLine(1, "tools/call", "export", "failed")
	appendFile(t, before, l1[:30])
	if st := tick(4); st.LeftBy[1].Request != nil {
		t.Errorf("a partial line joined: %+v", st.LeftBy[1].Request)
	}
	appendFile(t, before, l1[30:])
	st = tick(5)
	if r := st.LeftBy[1].Request; r == nil || r.User != 1 || r.Name != "export" {
		t.Errorf("request 1, written whole after its episode was stuck: %+v", r)
	}
	for _, l := range st.LeftBy {
		if strings.Contains(l.Fingerprint, "ann@example.com") {
			t.Errorf("a query's literal reached the page: %+v", l)
		}
	}

	// The after side: before's rows stay, after's come after them.
	after := filepath.Join(dir, "after", rundir.RequestsFile)
	fpa := &fakeProbe{}
	w = s.Part("after")
	w.Requests(after)
	w.Probing(fpa.status)
	fpa.set(probes.StuckTrace{TraceID: trace(2), HoldSeconds: 1, Open: true, Fingerprint: "SELECT 1"})
	if err := os.MkdirAll(filepath.Dir(after), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, after, reqLine(2, "tools/call", "x", "ok"))
	st = tick(6)
	if len(st.LeftBy) != 3 || st.LeftBy[0].Run != "before" || st.LeftBy[1].Run != "before" || st.LeftBy[2].Run != "after" ||
		st.LeftBy[2].Request == nil || st.Done {
		t.Fatalf("left by %+v: want before's two, then after's joined", st.LeftBy)
	}

	// At the end the forensics' join replaces the live one.
	writeForensics(t, filepath.Join(dir, "before"), rundir.WorstEpisode{PID: 7, HoldSeconds: 3, EndReason: rundir.EndTimeout,
		Fingerprint: "SELECT 2", TraceID: trace(0)})
	s.Finish(dir)
	if got := s.state.LeftBy; len(got) != 1 || got[0].TraceID != trace(0) || got[0].HoldSeconds != 3 || got[0].EndReason != rundir.EndTimeout {
		t.Errorf("after Finish, left by %+v: want the forensics' one episode", got)
	}
}
