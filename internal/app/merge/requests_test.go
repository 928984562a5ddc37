package merge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestRunMergesRequestIndexes: the merged run's requests.jsonl holds every
// shard's whole lines — a line a killed shard cut short is left out, even
// after a long one that spans read blocks — so reports can join an episode
// to the request of any shard.
func TestRunMergesRequestIndexes(t *testing.T) {
	root := t.TempDir()
	t0 := shardsStart
	dirs := writeShards(t, root, 3, 5*time.Second)
	want := map[string]int{} // trace id → user
	for i, d := range dirs {
		var b bytes.Buffer
		for j := range 50 {
			r := rundir.Request{TraceID: fmt.Sprintf("%030d%02d", j, i), User: i*1000 + j, Scenario: "agents", Method: "tools/call",
				Name: strings.Repeat("n", j*100), Start: t0, Outcome: rundir.RequestOK}
			line, _ := json.Marshal(r)
			b.Write(line)
			b.WriteByte('\n')
			want[r.TraceID] = r.User
		}
		if i == 2 {
			// Killed mid-write: a long line with no end, longer than a read block.
			b.WriteString(`{"trace_id":"ffffffffffffffffffffffffffffffff","name":"` + strings.Repeat("x", 100<<10))
		}
		if err := os.WriteFile(filepath.Join(d, rundir.RequestsFile), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	res, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: out})
	if err != nil || len(res.Problems) > 0 {
		t.Fatal(err, res.Problems)
	}
	raw, err := os.ReadFile(filepath.Join(out, rundir.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for line := range bytes.Lines(raw) {
		var r rundir.Request
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("merged line %.80q: %v", line, err)
		}
		got[r.TraceID] = r.User
	}
	if len(got) != len(want) {
		t.Errorf("merged %d requests, want %d", len(got), len(want))
	}
	for id, u := range want {
		if got[id] != u {
			t.Errorf("trace %s: user %d, want %d", id, got[id], u)
		}
	}
}

// TestRunWithoutRequestIndexes: shards without an index (older leakbench,
// or no run directory) merge without one.
func TestRunWithoutRequestIndexes(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 3*time.Second)
	out := filepath.Join(root, "out")
	if _, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, rundir.RequestsFile)); !os.IsNotExist(err) {
		t.Errorf("merged run has a request index no shard had: %v", err)
	}
}
