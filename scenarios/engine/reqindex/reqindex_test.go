package reqindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestWriterLines: lines added from many goroutines, past the flush size,
// all arrive whole and read back as rundir.Request with every field —
// names that need escaping included.
func TestWriterLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), rundir.RequestsFile)
	w, err := Open(path, []string{"agents", `q"uote`}, 4)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC)
	const users, each = 8, 500 // 4,000 lines of ~250 bytes: several flushes per shard
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			for i := range each {
				r := Request{User: u, Scenario: u % 2, Iteration: int64(i), Step: i % 3, Method: "tools/call",
					Name: fmt.Sprintf("tool \"%d\"\n", u), Start: t0, Took: 1500 * time.Microsecond, Outcome: rundir.RequestOK}
				r.Trace[0], r.Trace[1], r.Trace[15] = byte(u), byte(i), byte(i>>8)
				if i%10 == 0 {
					r.Outcome, r.Kind = rundir.RequestFailed, "timeout"
				}
				w.Add(&r)
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for line := range bytes.Lines(raw) {
		var r rundir.Request
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		seen[r.TraceID] = true
		wantScen := []string{"agents", `q"uote`}[r.User%2]
		if r.Scenario != wantScen || r.Method != "tools/call" || r.Name != fmt.Sprintf("tool \"%d\"\n", r.User) ||
			!r.Start.Equal(t0) || r.Seconds != 0.0015 || len(r.TraceID) != 32 {
			t.Fatalf("line read back as %+v", r)
		}
		if (r.Iteration%10 == 0) != (r.Outcome == rundir.RequestFailed && r.Kind == "timeout") {
			t.Fatalf("outcome %q kind %q for iteration %d", r.Outcome, r.Kind, r.Iteration)
		}
	}
	if len(seen) != users*each {
		t.Errorf("%d distinct lines, want %d", len(seen), users*each)
	}
}

// TestWriterStopsAtFirstError: a failed write is kept in Err and nothing
// more is written.
func TestWriterStopsAtFirstError(t *testing.T) {
	w, err := Open(filepath.Join(t.TempDir(), rundir.RequestsFile), []string{"s"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // the disk went away
	w.Add(&Request{Method: "ping", Outcome: rundir.RequestOK})
	w.Flush()
	if w.Err() == nil {
		t.Fatal("no error after writing to a closed file")
	}
}
