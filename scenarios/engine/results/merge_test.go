package results

import (
	"strings"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
)

// TestMergeGenerators: a merged run is saturated when any shard was, its
// reasons named by the shard; a shard without a self-check (written before
// it was recorded) makes the merge's "not recorded", never a guess.
func TestMergeGenerators(t *testing.T) {
	shard := func(seg string, g *rundir.Generator, lateMs ...int64) *Shard {
		h := hdrlog.New()
		for _, ms := range lateMs {
			h.RecordValue(ms * 1000) //nolint:errcheck // in range
		}
		return &Shard{State: &rundir.SeriesState{Segment: seg, Generator: g, LatenessTag: latenessTag}, Hists: map[string]*hdrhistogram.Histogram{latenessTag: h}}
	}
	kept := &rundir.Generator{Verdict: rundir.GeneratorKeptUp, EngineCPUs: 2, EngineCoresMean: 0.5, MachineCPUs: 8, DroppedIterations: 1}
	sat := &rundir.Generator{Verdict: rundir.GeneratorSaturated, Reasons: []string{"schedule late by p99 840 ms"}, EngineCPUs: 2, EngineCoresMean: 1.9, MachineCPUs: 8, MachineBusyMax: 0.99, DroppedIterations: 2}
	lat := hdrlog.New()
	for _, ms := range []int64{1, 2, 900, 950} {
		lat.RecordValue(ms * 1000) //nolint:errcheck // in range
	}
	g := mergeGenerators([]*Shard{shard("0/2", kept, 1, 2), shard("1/2", sat, 900, 950)}, lat)
	if g == nil || g.Verdict != rundir.GeneratorSaturated || len(g.Reasons) != 1 || g.Reasons[0] != "shard 1/2: schedule late by p99 840 ms" ||
		g.EngineCPUs != 4 || g.EngineCoresMean != 2.4 || g.MachineCPUs != 8 || g.MachineBusyMax != 0.99 || g.DroppedIterations != 3 || g.Lateness.Count != 4 {
		t.Errorf("merged %+v", g)
	}
	if !strings.Contains(g.Line(), "shard 1/2") {
		t.Errorf("line %q does not name the shard", g.Line())
	}
	old := shard("1/2", nil)
	old.State.LatenessTag = ""
	if g := mergeGenerators([]*Shard{shard("0/2", kept, 1), old}, lat); g != nil {
		t.Errorf("a shard without a self-check merged into %+v, want none (not recorded)", g)
	}
}
