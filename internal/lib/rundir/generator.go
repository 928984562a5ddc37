package rundir

import (
	"fmt"
	"strings"
)

// The generator's verdicts (Generator.Verdict).
const (
	// GeneratorKeptUp: the engine kept to its schedule with CPU to
	// spare; the latency figures are the target's.
	GeneratorKeptUp = "kept_up"
	// GeneratorSaturated: the engine ran late or out of CPU; its
	// latency figures include its own delay.
	GeneratorSaturated = "saturated"
)

// The verdict rule's bounds (Generator.Verdict says how they combine).
const (
	// GeneratorLagLimitMs bounds the lateness p99 of a generator that
	// kept up, in milliseconds.
	GeneratorLagLimitMs = 50
	// GeneratorBusyShare is the CPU share counted as full: of the cores
	// the engine may use (EngineCPUs), or of the machine.
	GeneratorBusyShare = 0.95
	// GeneratorBusySeconds is how many seconds (load.jsonl lines) at
	// full CPU make the generator saturated.
	GeneratorBusySeconds = 3
)

// Generator is the load generator's self-check over a run: whether it kept
// to its schedule, with the CPU it used and the machine's, so that a
// report never passes leakbench's own delay off as the target's latency.
type Generator struct {
	// Verdict is GeneratorKeptUp or GeneratorSaturated (Judge applies the
	// rule). The generator was saturated when any of these held:
	//
	//  1. its lateness p99 over the run exceeded GeneratorLagLimitMs
	//     (50 ms): one due time in a hundred waited that long for a CPU.
	//     A goroutine waiting for a CPU delays reading answers as much as
	//     starting requests, so every latency figure carries that wait,
	//     and arrival-rate latencies count from the due time outright.
	//     50 ms is well above what an idle Go runtime's timers miss by
	//     (well under a millisecond; a few under a GC's assist) and below
	//     the think times and request latencies that matter for a pool
	//     leak (hundreds of milliseconds and up);
	//  2. for GeneratorBusySeconds (3) seconds in a row or more, the
	//     engine used GeneratorBusyShare (95%) or more of the cores it may
	//     run on (EngineCPUs): a GOMAXPROCS or cgroup limit is full even
	//     when the machine is not;
	//  3. for 3 seconds in a row or more, the machine was 95% busy or
	//     more and the engine used at least half of the busy CPU: it is
	//     the one starving itself (a machine busy with the target alone
	//     is the target's business, and shows in rule 1 if it delays the
	//     engine).
	//
	// Rules 2 and 3 catch a generator with no due times at all (closed
	// users with no think time, pure peak rate), which rule 1 cannot
	// see; a few busy seconds (a ramp, a GC) are not saturation.
	// Dropped iterations are not in the rule: an arrival-rate executor
	// drops them for want of a free user, which a slow target causes as
	// readily as a slow generator.
	Verdict string `json:"verdict"`
	// Reasons says which rules held, in words ("schedule late by p99 840
	// ms"); empty when it kept up.
	Reasons []string `json:"reasons,omitempty"`

	// EngineCPUs is how many cores the engine could run on (GOMAXPROCS);
	// EngineCoresMean and EngineCoresMax the cores it used, over the run
	// and in its busiest second (CPU seconds per wall second).
	EngineCPUs      int     `json:"engine_cpus"`
	EngineCoresMean float64 `json:"engine_cores_mean"`
	EngineCoresMax  float64 `json:"engine_cores_max"`
	// MachineCPUs is how many CPUs the machine has; MachineBusyMax the
	// busiest second's busy share of all of them, in [0, 1] (absent
	// where /proc/stat is not readable).
	MachineCPUs    int     `json:"machine_cpus"`
	MachineBusyMax float64 `json:"machine_busy_max,omitempty"`
	// BusySeconds is the longest run of seconds in a row that rule 2 or
	// rule 3 found full.
	BusySeconds int `json:"busy_seconds"`

	// Lateness is how late the engine started what it had scheduled, in
	// milliseconds: a think time's end (the timer firing against when it
	// was due), an arrival-rate iteration (a user beginning it against
	// its due time), and the first request after either (sent against the
	// same due time). Count 0: nothing was scheduled (no think time, no
	// arrival rate).
	Lateness LatencyStats `json:"lateness"`
	// DroppedIterations is LoadResult.DroppedIterations, here beside the
	// rest of the self-check.
	DroppedIterations int64 `json:"dropped_iterations"`
}

// KeptUp reports whether the generator kept up; false for a nil record
// (a run from before it was recorded says nothing either way).
func (g *Generator) KeptUp() bool { return g != nil && g.Verdict == GeneratorKeptUp }

// Judge sets the verdict, its reasons and BusySeconds by the rule Verdict
// states, from Lateness and the longest runs of seconds in a row in which
// the engine's cores (cpuSeconds, rule 2) or the machine (machineSeconds,
// rule 3) were full; EngineCPUs must be set.
func (g *Generator) Judge(cpuSeconds, machineSeconds int) {
	g.Verdict, g.Reasons = GeneratorKeptUp, nil
	g.BusySeconds = max(cpuSeconds, machineSeconds)
	if g.Lateness.Count > 0 && g.Lateness.P99Ms > GeneratorLagLimitMs {
		g.Reasons = append(g.Reasons, "schedule late by p99 "+lagMs(g.Lateness.P99Ms))
	}
	if cpuSeconds >= GeneratorBusySeconds {
		cores := "cores"
		if g.EngineCPUs == 1 {
			cores = "core"
		}
		g.Reasons = append(g.Reasons, fmt.Sprintf("the engine used all of its %d %s for %d s", g.EngineCPUs, cores, cpuSeconds))
	}
	if machineSeconds >= GeneratorBusySeconds {
		g.Reasons = append(g.Reasons, fmt.Sprintf("the machine was ≥ 95%% busy for %d s, at least half of it the engine", machineSeconds))
	}
	if len(g.Reasons) > 0 {
		g.Verdict = GeneratorSaturated
	}
}

// Line sums the self-check up as a report's Generator row shows it:
// "kept up: schedule late by p99 3.0 ms, 0.2 cores", or "saturated:
// schedule late by p99 840 ms — latency figures include leakbench's own
// delay". A nil record (a run from before it was recorded, a merge of
// shards of an older leakbench) is "not recorded": never a figure that was not measured.
func (g *Generator) Line() string {
	switch {
	case g == nil:
		return "not recorded"
	case g.Verdict == GeneratorSaturated:
		return "saturated: " + strings.Join(g.Reasons, "; ") + " — latency figures include leakbench's own delay"
	}
	late := "nothing scheduled (no think time or arrival rate)"
	if g.Lateness.Count > 0 {
		late = "schedule late by p99 " + lagMs(g.Lateness.P99Ms)
	}
	cores := fmt.Sprintf("%.1f", g.EngineCoresMean)
	if g.EngineCoresMean < 0.1 {
		cores = fmt.Sprintf("%.2f", g.EngineCoresMean)
	}
	return "kept up: " + late + ", " + cores + " cores"
}

// lagMs writes milliseconds as reports do: "3.2 ms", "840 ms", "1.25 s".
func lagMs(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f ms", ms)
}
