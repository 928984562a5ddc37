package rundir

import "time"

// ProcessFile is a soak's record of the service's process figures and
// leakbench's own ([ProcessSample]), one JSON object a line, appended as
// the soak goes.
const ProcessFile = "process.jsonl"

// ProcessSample is one reading of the processes a soak watches: the
// service's figures from its /metrics (client_golang's process and Go
// collectors), and leakbench's own from /proc/self.
type ProcessSample struct {
	Time time.Time `json:"time"`
	// Service is the service's reading; nil when its /metrics was not
	// read (none, or the scrape failed: Error says why).
	Service *ProcessFigures `json:"service,omitempty"`
	// Leakbench is leakbench's own process.
	Leakbench *ProcessFigures `json:"leakbench,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// ProcessFigures are a process's resident memory, open file descriptors
// and goroutines; a figure not exposed is nil.
type ProcessFigures struct {
	RSSBytes   *float64 `json:"rss_bytes,omitempty"`
	OpenFDs    *float64 `json:"open_fds,omitempty"`
	Goroutines *float64 `json:"goroutines,omitempty"`
}

// SoakSettings are a soak's settings: a profile's soak section, or
// leakbench soak's flags.
type SoakSettings struct {
	// Baseline is how long the probes sample before the load starts.
	Baseline time.Duration `json:"baseline" yaml:"baseline"`
	// Warmup is the start of the load left out of the fit.
	Warmup time.Duration `json:"warmup" yaml:"warmup"`
	// CoolDown is how long the probes sample after the load, with none.
	CoolDown time.Duration `json:"cool_down" yaml:"cool_down"`
	// MinPoints is the fewest one-second points of the steady window a
	// resource needs to be judged.
	MinPoints int `json:"min_points" yaml:"min_points"`
	// MinR2 is the least R² of a fit for a slope to count as growth.
	MinR2 float64 `json:"min_r2" yaml:"min_r2"`
	// Slopes are the growth thresholds per resource kind, per hour
	// (connections, idle_in_tx, stuck, sv_active, cl_waiting,
	// pool_acquired, unclosed_sessions, rss_bytes, open_fds, goroutines):
	// a steeper fit is growth. Kinds left out take the defaults.
	Slopes map[string]float64 `json:"slopes,omitempty" yaml:"slopes"`
}

// SoakResult is summary.json's soak section.
type SoakResult struct {
	Settings SoakSettings `json:"settings"`
	// BaselineStart, LoadStart, LoadEnd and CoolDownEnd bound the phases:
	// baseline (no load), load (its first Warmup left out of the fit:
	// SteadyStart), cool-down (no load).
	BaselineStart time.Time `json:"baseline_start"`
	LoadStart     time.Time `json:"load_start"`
	SteadyStart   time.Time `json:"steady_start"`
	LoadEnd       time.Time `json:"load_end"`
	CoolDownEnd   time.Time `json:"cool_down_end"`
	// Verdict is the soak's: "growing" when a resource of the service is,
	// "flat" when every judged one is flat or recovered, "not judged"
	// when none could be judged.
	Verdict string `json:"verdict"`
	// Resources are the series judged, one per resource.
	Resources []SoakResource `json:"resources"`
	// Culprits are what accumulated: the stuck episodes that began in the
	// load and were still open when it ended, grouped as the probe's
	// culprits are.
	Culprits []Culprit `json:"culprits,omitempty"`
	// Leakbench is leakbench's own resident memory over the soak: its
	// fit, reported, never judged as the service's.
	Leakbench *SoakResource `json:"leakbench,omitempty"`
}

// SoakResource is one resource's trend over the soak.
type SoakResource struct {
	// Name is the resource: "connections (mcp-gateway)", "idle_in_tx", …;
	// Kind its kind (the key of Settings.Slopes); Unit what it counts.
	Name string `json:"name"`
	Kind string `json:"kind"`
	Unit string `json:"unit"`
	// Verdict: "growing", "recovered" (grew, back at its start by the end
	// of the cool-down), "flat" or "not judged" (Reason says why).
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// Line is the verdict as a sentence: "growing: +37 connections/hour
	// (R² 0.96), not recovered in cool-down".
	Line string `json:"line"`
	// Points is how many one-second points the steady window had.
	Points int `json:"points"`
	// SlopePerHour and R2 are the least-squares fit over the steady
	// window; ThresholdPerHour the slope above which it is growth.
	SlopePerHour     float64 `json:"slope_per_hour"`
	R2               float64 `json:"r2"`
	ThresholdPerHour float64 `json:"threshold_per_hour"`
	// Baseline is the mean before the load (omitted: no baseline sample),
	// SteadyStart and SteadyEnd the fit's value at the steady window's
	// ends, End the mean of the cool-down's last 10 s.
	Baseline    *float64 `json:"baseline,omitempty"`
	SteadyStart float64  `json:"steady_start"`
	SteadyEnd   float64  `json:"steady_end"`
	End         *float64 `json:"end,omitempty"`
	// Recovered: by the end of the cool-down it was back at most the
	// kind's floor above its start (the baseline, or the fit's start of
	// the steady window when higher). Nil when not judged.
	Recovered *bool `json:"recovered,omitempty"`
}
