package forensics

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestJoin: stuck episodes are joined to the requests whose trace ids
// their last queries carried, grouped by method, tool and outcome; leaked
// and slow releases are told apart.
func TestJoin(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	id := func(i int) string { return strings.Repeat("0", 30) + string(rune('a'+i/10)) + string(rune('0'+i%10)) }
	var reqs []byte
	line := func(dst *[]byte, v any) {
		raw, _ := json.Marshal(v)
		*dst = append(append(*dst, raw...), '\n')
	}
	fb := New(dir, &rundir.ProbeSummary{StuckAfterSeconds: 2})
	for i := range 10 {
		e := rundir.Episode{PID: int32(100 + i), Start: t0.Add(time.Duration(i) * time.Second), HoldSeconds: 5, EndReason: rundir.EndTimeout, TraceID: id(i)}
		switch {
		case i == 8: // no request with its trace id
			e.TraceID = strings.Repeat("f", 32)
		case i == 9: // released late by the service
			e.HoldSeconds, e.EndReason = 2.5, rundir.EndReleased
		}
		fb.Add(&e)
	}
	fb.Add(&rundir.Episode{PID: 1, HoldSeconds: 0.01, EndReason: rundir.EndReleased, TraceID: id(50)}) // not stuck
	for i := range 60 {
		r := rundir.Request{TraceID: id(i), User: i, Scenario: "agents", Method: "tools/call", Name: "generate_report",
			Start: t0.Add(time.Duration(i) * time.Second), Seconds: 0.9, Outcome: rundir.RequestAborted}
		if i == 9 {
			r.Name, r.Outcome, r.Seconds = "get_team_tools", rundir.RequestOK, 0.1
		}
		line(&reqs, r)
	}
	reqs = append(reqs, `{"trace_id":"torn`...)
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), reqs, 0o644); err != nil {
		t.Fatal(err)
	}
	f := fb.Finish()
	if f.StuckEpisodes != 10 || f.Leaked != 9 || f.SlowReleases != 1 || f.Traced != 10 || f.Joined != 9 || !f.RequestsIndexed {
		t.Fatalf("forensics %+v", f)
	}
	if g := f.ByRequest[0]; g.Method != "tools/call" || g.Name != "generate_report" || g.Outcome != "aborted" || g.Episodes != 8 || math.Abs(g.MeanRequestSeconds-0.9) > 1e-9 {
		t.Errorf("top group %+v", g)
	}
	if w := f.Worst[0]; w.Request == nil || w.Request.User != 0 || w.Request.Outcome != "aborted" || !w.Request.Ended.Equal(t0.Add(900*time.Millisecond)) {
		t.Errorf("worst %+v %+v", w, w.Request)
	}
	if f.First == nil || f.First.PID != 100 || f.First.Request == nil || f.First.Request.Name != "generate_report" {
		t.Errorf("first %+v", f.First)
	}
}

// TestJoinPartialIndex: a request index the reader cannot finish (a line
// past jsonl's bound) joins nothing, rather than what it read before the
// line: a request it missed could be the one that held the session (#26).
func TestJoinPartialIndex(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	id := strings.Repeat("0", 31) + "a"
	fb := New(dir, &rundir.ProbeSummary{StuckAfterSeconds: 2})
	fb.Add(&rundir.Episode{PID: 100, Start: t0, HoldSeconds: 5, EndReason: rundir.EndTimeout, TraceID: id})
	raw, _ := json.Marshal(rundir.Request{TraceID: id, User: 1, Method: "tools/call", Start: t0, Seconds: 0.5, Outcome: rundir.RequestOK})
	reqs := append(raw, '\n')
	reqs = append(reqs, `{"trace_id":"`+strings.Repeat("x", 5<<20)+"\"}\n"...)
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), reqs, 0o644); err != nil {
		t.Fatal(err)
	}
	if f := fb.Finish(); f.Joined != 0 || f.RequestsIndexed {
		t.Errorf("a partial index: joined %d, indexed %v; want no join claimed", f.Joined, f.RequestsIndexed)
	}
}
