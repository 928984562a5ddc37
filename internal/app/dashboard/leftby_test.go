package dashboard

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// writeForensics writes a run directory at dir whose summary.json has
// the forensics' worst episodes ws.
func writeForensics(t *testing.T, dir string, ws ...rundir.WorstEpisode) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(rundir.Summary{SchemaVersion: rundir.SchemaVersion, Forensics: &rundir.Forensics{StuckAfterSeconds: 1, Worst: ws}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.SummaryFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFinishLeftBy: at the end the page gets the requests that left the
// stuck sessions, from the forensics of the command's run and of its
// sides (before first), each query a fingerprint with no literal; an
// episode the join did not find is listed without a request; a command
// with no run directory, or one without forensics, gets none.
func TestFinishLeftBy(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	leaky := rundir.WorstEpisode{PID: 7, Start: t0, HoldSeconds: 3, EndReason: rundir.EndTimeout,
		Fingerprint: "SELECT * FROM tokens WHERE email = 'ann@example.com'", TraceID: strings.Repeat("ab", 16), JoinedBy: rundir.JoinedByTrace,
		Request: &rundir.EpisodeRequest{User: 4, Scenario: "agents", Iteration: 2, Method: "tools/call", Name: "generate_report",
			Started: t0.Add(-time.Second), Ended: t0.Add(-100 * time.Millisecond), Outcome: rundir.RequestAborted}}
	writeForensics(t, filepath.Join(dir, "after"), rundir.WorstEpisode{PID: 9, HoldSeconds: 1.5, EndReason: rundir.EndReleased, Fingerprint: "SELECT 1"})
	writeForensics(t, filepath.Join(dir, "before"), leaky)
	if err := os.MkdirAll(filepath.Join(dir, "capacity"), 0o755); err != nil { // no summary: nothing from it
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Finish(dir)
	got := s.state.LeftBy
	if len(got) != 2 || got[0].Run != "before" || got[1].Run != "after" {
		t.Fatalf("left by %+v: want before's episode, then after's", got)
	}
	b := got[0]
	if r := b.Request; r == nil || r.User != 4 || r.Name != "generate_report" || r.Outcome != rundir.RequestAborted || r.Seconds != 0.9 ||
		b.JoinedBy != rundir.JoinedByTrace || b.TraceID != leaky.TraceID {
		t.Errorf("before's episode %+v, request %+v", b, b.Request)
	}
	if got[1].Request != nil {
		t.Errorf("after's episode was not joined, yet has %+v", got[1].Request)
	}
	if strings.Contains(string(s.stateRaw), "ann@example.com") {
		t.Errorf("a query's literal reached the page: %s", s.stateRaw)
	}

	for name, d := range map[string]string{"no run directory": "", "no forensics": t.TempDir()} {
		s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		s.Finish(d)
		if s.state.LeftBy != nil {
			t.Errorf("%s: left by %+v", name, s.state.LeftBy)
		}
		s.Close()
	}
}
