package forensics

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestJoinEpisodes: each episode whose trace id the request index holds
// gains that request in episodes.jsonl; the others and every other field
// stay as they were, and a torn last line is kept, not dropped.
func TestJoinEpisodes(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tid := strings.Repeat("ab", 16)
	eps := []rundir.Episode{
		{PID: 1, Start: t0, HoldSeconds: 5.2, EndReason: "timeout", Query: "SELECT 1", TraceID: tid, SpanID: strings.Repeat("c", 16), Blocked: 2},
		{PID: 2, Start: t0, HoldSeconds: 0.1, EndReason: "released", TraceID: strings.Repeat("ee", 16)}, // not in the index
		{PID: 3, Start: t0, HoldSeconds: 3, EndReason: "timeout"},                                       // no trace context
	}
	var b bytes.Buffer
	for _, e := range eps {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	torn := `{"pid":4,"start":"2026-12-01T09:00:0`
	b.WriteString(torn + "\n")
	if err := os.WriteFile(filepath.Join(dir, rundir.EpisodesFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var idx bytes.Buffer
	for _, r := range []rundir.Request{
		{TraceID: strings.Repeat("00", 16), User: 9, Scenario: "a", Method: "ping", Start: t0, Outcome: rundir.RequestOK},
		{TraceID: tid, User: 7, Scenario: "agents", Iteration: 3, Step: 1, Method: "tools/call", Name: "generate_report",
			Start: t0.Add(-time.Second), Seconds: 0.9, Outcome: rundir.RequestAborted},
	} {
		line, _ := json.Marshal(r)
		idx.Write(line)
		idx.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), idx.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	traced, joined, err := JoinEpisodes(dir)
	if err != nil || traced != 2 || joined != 1 {
		t.Fatalf("JoinEpisodes: traced %d joined %d err %v; want 2, 1", traced, joined, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.EpisodesFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 4 || lines[3] != torn {
		t.Fatalf("episodes.jsonl now has %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	for i, want := range eps {
		var got rundir.Episode
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		req := got.Request
		got.Request = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("episode %d changed: %+v, was %+v", i, got, want)
		}
		switch {
		case i == 0 && (req == nil || req.User != 7 || req.Name != "generate_report" || req.Outcome != rundir.RequestAborted ||
			!req.Ended.Equal(t0.Add(-100*time.Millisecond))):
			t.Errorf("episode 0's request: %+v", req)
		case i > 0 && req != nil:
			t.Errorf("episode %d joined to %+v", i, req)
		}
	}
	// A run without a request index is left alone.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, rundir.EpisodesFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, joined, err := JoinEpisodes(other); err != nil || joined != 0 {
		t.Errorf("no index: joined %d, %v", joined, err)
	}
	if after, _ := os.ReadFile(filepath.Join(other, rundir.EpisodesFile)); !bytes.Equal(after, b.Bytes()) {
		t.Error("episodes.jsonl of a run without an index was rewritten")
	}
}
