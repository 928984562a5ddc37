package merge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

// TestRunTakesTheEarliestFirstError: each shard knows when it first saw
// a failure of a kind and its own users then; the merged run keeps the
// earliest shard's time, measured from the merged start, with every
// shard's users in that second, and its summary says so.
func TestRunTakesTheEarliestFirstError(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 5*time.Second)
	firsts := []map[string]rundir.FirstError{
		{"conn_refused": {At: shardsStart.Add(3200 * time.Millisecond), ElapsedSeconds: 3.2, ActiveUsers: 400},
			"timeout": {At: shardsStart.Add(1500 * time.Millisecond), ElapsedSeconds: 1.5, ActiveUsers: 300}},
		{"conn_refused": {At: shardsStart.Add(2400 * time.Millisecond), ElapsedSeconds: 2.4, ActiveUsers: 500}},
	}
	for i, f := range firsts {
		editSeries(t, dirs[i], func(st *rundir.SeriesState) { st.FirstErrors = f })
	}
	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out")})
	if err != nil || len(out.Problems) > 0 {
		t.Fatal(err, out.Problems)
	}
	got := out.Summary.Load.FirstErrors
	// Each shard had 1,000 users active in every second (writeShard).
	want := map[string]rundir.FirstError{
		"conn_refused": {At: shardsStart.Add(2400 * time.Millisecond), ElapsedSeconds: 2.4, ActiveUsers: 2000},
		"timeout":      {At: shardsStart.Add(1500 * time.Millisecond), ElapsedSeconds: 1.5, ActiveUsers: 2000},
	}
	if len(got) != len(want) {
		t.Fatalf("merged first errors %+v, want %+v", got, want)
	}
	for kind, w := range want {
		g := got[kind]
		if !g.At.Equal(w.At) || g.ElapsedSeconds != w.ElapsedSeconds || g.ActiveUsers != w.ActiveUsers {
			t.Errorf("%s: merged %+v, want %+v", kind, g, w)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "out", rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var written rundir.Summary
	if err := json.Unmarshal(raw, &written); err != nil {
		t.Fatal(err)
	}
	if w := written.Load.FirstErrors["conn_refused"]; w.ActiveUsers != 2000 {
		t.Errorf("summary.json's first refusal %+v, want 2000 users active", w)
	}
	out.Summary.Load.ErrorsByKind["conn_refused"] = 7
	var md bytes.Buffer
	if err := reports.WriteSummaryMarkdown(&md, out.Summary); err != nil {
		t.Fatal(err)
	}
	if line := "- conn_refused: 7 (first at 2.4 s of the load, 2000 users active)"; !strings.Contains(md.String(), line) {
		t.Errorf("the summary does not say where refusals began (%q):\n%s", line, md.String())
	}
}

// TestRunWithoutLoadKeepsUsersUnknown: shards that left no load.jsonl
// (an older leakbench, a killed run) give the merge no users for the
// second of a first failure; a shard's own count is not the run's, so
// none is stated.
func TestRunWithoutLoadKeepsUsersUnknown(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 5*time.Second)
	at := shardsStart.Add(2400 * time.Millisecond)
	for _, dir := range dirs {
		editSeries(t, dir, func(st *rundir.SeriesState) {
			st.FirstErrors = map[string]rundir.FirstError{"conn_refused": {At: at, ElapsedSeconds: 2.4, ActiveUsers: 500}}
		})
		if err := os.Remove(filepath.Join(dir, rundir.LoadFile)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out")})
	if err != nil || len(out.Problems) > 0 {
		t.Fatal(err, out.Problems)
	}
	if f := out.Summary.Load.FirstErrors["conn_refused"]; !f.At.Equal(at) || f.ActiveUsers != 0 {
		t.Errorf("merged first refusal %+v, want at %s with users unknown (0)", f, at)
	}
	out.Summary.Load.ErrorsByKind["conn_refused"] = 7
	var md bytes.Buffer
	if err := reports.WriteSummaryMarkdown(&md, out.Summary); err != nil {
		t.Fatal(err)
	}
	if line := "- conn_refused: 7 (first at 2.4 s of the load)\n"; !strings.Contains(md.String(), line) {
		t.Errorf("the summary states users it did not see (want %q):\n%s", line, md.String())
	}
}
