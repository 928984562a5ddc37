package rundir

import (
	"slices"
	"strings"
	"testing"
)

// TestGeneratorJudge: each rule alone makes the generator saturated, at
// its bound and not below it; none of them, it kept up.
func TestGeneratorJudge(t *testing.T) {
	late := func(p99 float64) LatencyStats { return LatencyStats{Count: 100, P50Ms: 1, P99Ms: p99, MaxMs: p99 * 2} }
	for _, tc := range []struct {
		name           string
		g              Generator
		cpuS, machineS int
		want           string
		reasons        []string
	}{
		{"on time, CPU to spare", Generator{EngineCPUs: 2, Lateness: late(3)}, 2, 2, GeneratorKeptUp, nil},
		{"late at the bound", Generator{EngineCPUs: 2, Lateness: late(50)}, 0, 0, GeneratorKeptUp, nil},
		{"nothing scheduled", Generator{EngineCPUs: 2}, 0, 0, GeneratorKeptUp, nil},
		{"late", Generator{EngineCPUs: 2, Lateness: late(840)}, 0, 0, GeneratorSaturated,
			[]string{"schedule late by p99 840 ms"}},
		{"its cores full", Generator{EngineCPUs: 1, Lateness: late(3)}, 3, 0, GeneratorSaturated,
			[]string{"the engine used all of its 1 core for 3 s"}},
		{"the machine full", Generator{EngineCPUs: 4}, 0, 5, GeneratorSaturated,
			[]string{"the machine was ≥ 95% busy for 5 s, at least half of it the engine"}},
		{"all three", Generator{EngineCPUs: 2, Lateness: late(1250)}, 4, 3, GeneratorSaturated,
			[]string{"schedule late by p99 1.25 s", "the engine used all of its 2 cores for 4 s",
				"the machine was ≥ 95% busy for 3 s, at least half of it the engine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			g.Judge(tc.cpuS, tc.machineS)
			if g.Verdict != tc.want || !slices.Equal(g.Reasons, tc.reasons) {
				t.Errorf("verdict %s %q, want %s %q", g.Verdict, g.Reasons, tc.want, tc.reasons)
			}
			if g.BusySeconds != max(tc.cpuS, tc.machineS) {
				t.Errorf("busy seconds %d", g.BusySeconds)
			}
			if g.KeptUp() != (tc.want == GeneratorKeptUp) {
				t.Errorf("KeptUp() = %v", g.KeptUp())
			}
		})
	}
}

// TestGeneratorLine: the report row's words, for each verdict and for a
// run with no record, which says so and no figure.
func TestGeneratorLine(t *testing.T) {
	kept := &Generator{EngineCPUs: 2, EngineCoresMean: 0.23, Lateness: LatencyStats{Count: 9, P99Ms: 3}}
	kept.Judge(0, 0)
	sat := &Generator{EngineCPUs: 2, EngineCoresMean: 1.9, Lateness: LatencyStats{Count: 9, P99Ms: 840}}
	sat.Judge(0, 0)
	idle := &Generator{EngineCPUs: 2, EngineCoresMean: 0.04}
	idle.Judge(0, 0)
	var none *Generator
	for g, want := range map[*Generator]string{
		kept: "kept up: schedule late by p99 3.0 ms, 0.2 cores",
		sat:  "saturated: schedule late by p99 840 ms — latency figures include leakbench's own delay",
		idle: "kept up: nothing scheduled (no think time or arrival rate), 0.04 cores",
		none: "not recorded",
	} {
		if got := g.Line(); got != want {
			t.Errorf("Line() = %q, want %q", got, want)
		}
	}
	if none.KeptUp() || strings.ContainsAny(none.Line(), "0123456789") {
		t.Error("a run without a record claims something")
	}
}
