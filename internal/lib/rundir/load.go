package rundir

import "time"

// LoadPoint is one line of load.jsonl: what the virtual users did in one
// second of the run (scenarios/FORMAT.md describes every field). The engine
// appends one a second while it plays, so that a killed run keeps its
// time series; the counters are that second's, not the run's.
type LoadPoint struct {
	Time              time.Time `json:"time"`
	ElapsedSeconds    float64   `json:"elapsed_seconds"`
	ActiveUsers       int64     `json:"active_users"`
	Requests          int64     `json:"requests"`
	Failures          int64     `json:"failures"`
	Aborted           int64     `json:"aborted"`
	Iterations        int64     `json:"iterations"`
	DroppedIterations int64     `json:"dropped_iterations"`
	ReqPerSecond      float64   `json:"req_per_second"`
	// Latency percentiles of the requests that ended in that second, in
	// milliseconds; 0 when none did.
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
	// The http steps' share of Requests and Failures, and the latency
	// percentiles of their answers in that second (ms); absent when the
	// plan has no http steps or none ended in that second.
	HTTPRequests int64   `json:"http_requests,omitempty"`
	HTTPFailures int64   `json:"http_failures,omitempty"`
	HTTPP50Ms    float64 `json:"http_p50_ms,omitempty"`
	HTTPP95Ms    float64 `json:"http_p95_ms,omitempty"`
	HTTPP99Ms    float64 `json:"http_p99_ms,omitempty"`

	// The generator's own figures for that second (Generator sums them
	// up; absent in runs from before they were recorded).
	// EngineCores is the CPU the engine's process used, in cores (CPU
	// seconds per wall second); MachineBusy the share of the whole
	// machine's CPU that was busy, in [0, 1] (absent where /proc/stat is
	// not readable).
	EngineCores float64 `json:"engine_cores,omitempty"`
	MachineBusy float64 `json:"machine_busy,omitempty"`
	// LateSamples counts the due times met in that second (think times
	// ending, arrival-rate iterations starting, the requests they lead
	// to) and LateP50Ms, LateP99Ms, LateMaxMs how late they were
	// started, in milliseconds; absent when nothing was due.
	LateSamples int64   `json:"late_samples,omitempty"`
	LateP50Ms   float64 `json:"late_p50_ms,omitempty"`
	LateP99Ms   float64 `json:"late_p99_ms,omitempty"`
	LateMaxMs   float64 `json:"late_max_ms,omitempty"`
	// Scale lists the changes of externally-controlled scenarios' users
	// made in this second (absent: none).
	Scale []ScaleChange `json:"scale,omitempty"`
}

// ScaleChange is one change of an externally-controlled scenario's users
// while it ran: a run steered by hand still reads as evidence.
type ScaleChange struct {
	Time time.Time `json:"time"`
	// ElapsedSeconds is since the load started.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Scenario       string  `json:"scenario"`
	// From and To are the scenario's target users before and after.
	From int `json:"from"`
	To   int `json:"to"`
	// By says who asked: "page" (the dashboard) or "command" (leakbench
	// scale).
	By string `json:"by"`
}
