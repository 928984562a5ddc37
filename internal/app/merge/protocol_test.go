package merge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/merge"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestRunSumsProtocols: the users' MCP protocol versions are summed over
// the shards, for the run and for each scenario.
func TestRunSumsProtocols(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 3*time.Second)
	for i, spoke := range []map[string]int64{{"2026-07-28": 500}, {"2026-07-28": 480, "2025-11-25": 20}} {
		editSeries(t, dirs[i], func(st *rundir.SeriesState) { st.Scenarios[0].Protocol = spoke })
	}
	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out")})
	if err != nil {
		t.Fatal(err)
	}
	l := out.Summary.Load
	if l.Protocol["2026-07-28"] != 980 || l.Protocol["2025-11-25"] != 20 || l.Scenarios["agents"].Protocol["2026-07-28"] != 980 {
		t.Errorf("merged protocol %v, scenario's %v; want 980 on 2026-07-28 and 20 on 2025-11-25", l.Protocol, l.Scenarios["agents"].Protocol)
	}
}

// TestRunSumsFeatures: the users' 2026-07-28 feature counts (cache hits,
// input round trips, tasks, listen streams) are summed over the shards.
func TestRunSumsFeatures(t *testing.T) {
	root := t.TempDir()
	dirs := writeShards(t, root, 2, 3*time.Second)
	for i, f := range []*rundir.FeatureStats{
		{CacheHits: map[string]int64{"tools/list": 10}, InputRoundTrips: 3, Tasks: &rundir.TaskStats{Created: 4, Completed: 4},
			Listen: &rundir.ListenStats{Streams: 5, Events: map[string]int64{"notifications/tools/list_changed": 7}}},
		{CacheHits: map[string]int64{"tools/list": 1, "resources/read": 2}, Tasks: &rundir.TaskStats{Created: 2, GivenUp: 2}},
	} {
		editSeries(t, dirs[i], func(st *rundir.SeriesState) { st.Scenarios[0].Features = f })
	}
	out, err := merge.Run(context.Background(), merge.Options{Dirs: dirs, Out: filepath.Join(root, "out")})
	if err != nil {
		t.Fatal(err)
	}
	f := out.Summary.Load.Features
	if f == nil || f.CacheHits["tools/list"] != 11 || f.CacheHits["resources/read"] != 2 || f.InputRoundTrips != 3 ||
		f.Tasks.Created != 6 || f.Tasks.Completed != 4 || f.Tasks.GivenUp != 2 || f.Listen.Streams != 5 || f.Listen.Events["notifications/tools/list_changed"] != 7 {
		t.Errorf("merged features %+v (tasks %+v, listen %+v)", f, f.Tasks, f.Listen)
	}
}

// editSeries rewrites a shard's series.json through edit.
func editSeries(t *testing.T, dir string, edit func(*rundir.SeriesState)) {
	t.Helper()
	path := filepath.Join(dir, rundir.SeriesFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st rundir.SeriesState
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	edit(&st)
	raw, _ = json.Marshal(st)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
