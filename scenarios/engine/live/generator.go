package live

import "github.com/prometheus/client_golang/prometheus"

// Generator is the load generator's self-check as of its last second
// (summary.json's load.generator over the whole run): what a dashboard
// shows to tell the target's latency from leakbench's own delay.
type Generator struct {
	// CPUs is how many cores the engine may run on (GOMAXPROCS); Cores
	// how many it used in the last second.
	CPUs  int
	Cores float64
	// MachineBusy is the machine's busy CPU share in the last second, in
	// [0, 1]; MachineKnown is false where /proc/stat is not readable.
	MachineBusy  float64
	MachineKnown bool
	// LateSamples counts the due times met in the last second; LateP50,
	// LateP99 and LateMax how late they were started, in seconds.
	LateSamples               int64
	LateP50, LateP99, LateMax float64
}

var (
	descGenCPUs = prometheus.NewDesc("leakbench_generator_cpus",
		"Cores the load generator may run on (GOMAXPROCS).", nil, nil)
	descGenCores = prometheus.NewDesc("leakbench_generator_cores",
		"CPU the load generator's process used in the last second, in cores.", nil, nil)
	descGenMachineBusy = prometheus.NewDesc("leakbench_generator_machine_busy_ratio",
		"Share of the machine's CPU that was busy in the last second (/proc/stat).", nil, nil)
	descGenLateP50 = prometheus.NewDesc("leakbench_generator_schedule_late_p50_seconds",
		"Median lateness of what the generator had scheduled in the last second (think times, arrival-rate iterations, the requests after them).", nil, nil)
	descGenLateP99 = prometheus.NewDesc("leakbench_generator_schedule_late_p99_seconds",
		"99th percentile of the generator's schedule lateness in the last second.", nil, nil)
	descGenLateMax = prometheus.NewDesc("leakbench_generator_schedule_late_max_seconds",
		"Largest lateness of the generator's schedule in the last second.", nil, nil)
)

var generatorDescs = []*prometheus.Desc{descGenCPUs, descGenCores, descGenMachineBusy, descGenLateP50, descGenLateP99, descGenLateMax}

// collectGenerator sends the generator's gauges (none before its first
// second: a gauge at 0 would claim it was idle and on time).
func collectGenerator(ch chan<- prometheus.Metric, g *Generator) {
	if g == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(descGenCPUs, float64(g.CPUs))
	gauge(descGenCores, g.Cores)
	if g.MachineKnown {
		gauge(descGenMachineBusy, g.MachineBusy)
	}
	// Lateness of a second in which nothing was due is unknown, not 0.
	if g.LateSamples > 0 {
		gauge(descGenLateP50, g.LateP50)
		gauge(descGenLateP99, g.LateP99)
		gauge(descGenLateMax, g.LateMax)
	}
}
