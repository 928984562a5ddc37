package scenarios

import "time"

// LatencyStats summarizes one latency histogram, in milliseconds: k6's
// avg (MeanMs), min, med (P50Ms), max, p(90), p(95) and p(99).
type LatencyStats struct {
	Count  int64   `json:"count"`
	MinMs  float64 `json:"min_ms"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// Result is what a run measured. It is a plain value that serializes to
// JSON, with no secret in it.
type Result struct {
	// Config is the resolved legacy configuration, for runs made with
	// [Run]; Plan the resolved plan, for runs made with [RunPlan].
	Config Config `json:"config,omitzero"`
	Plan   *Plan  `json:"plan,omitempty"`

	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// EndReason is EndCompleted, EndInterrupted (the run's context ended)
	// or EndAbortedByThreshold.
	EndReason string `json:"end_reason"`
	// Interrupted is EndReason == EndInterrupted.
	Interrupted bool `json:"interrupted"`

	// Requests counts every request sent; an initialize handshake counts
	// once. Failures excludes kinds "aborted" (requests the scenario gave
	// up on with abortAfter, counted in Aborted) and "canceled" (requests
	// abandoned because the run was stopped). ErrorsByKind has every kind,
	// zero or not.
	Requests     int64            `json:"requests"`
	Failures     int64            `json:"failures"`
	Aborted      int64            `json:"aborted"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	// Iterations counts completed passes through a flow;
	// DroppedIterations those an arrival-rate executor could not start
	// for want of a free user.
	Iterations        int64 `json:"iterations"`
	DroppedIterations int64 `json:"dropped_iterations"`
	// Reinits counts re-initializations after the target answered 404 to
	// a request carrying a session id (session expired).
	Reinits int64 `json:"reinits"`
	// InitRetries counts initialize attempts repeated after a failure;
	// AbortedUsers the users that gave up after maxInitAttempts failures.
	InitRetries  int64 `json:"init_retries"`
	AbortedUsers int64 `json:"aborted_users"`
	// EndedSessions counts sessions ended by endSession steps.
	EndedSessions int64 `json:"ended_sessions"`
	PeakUsers     int   `json:"peak_users"`

	// Latency by method ("initialize", "tools/list", "tools/call", ...),
	// by tool and prompt ("tools/call:<name>", "prompts/get:<name>"), and
	// "all" (every method). Aborted and canceled requests are not
	// included. Arrival-rate scenarios measure from the intended start.
	Latency           map[string]LatencyStats `json:"latency"`
	IterationDuration LatencyStats            `json:"iteration_duration"`

	// Scenarios has each scenario's own counters, by name.
	Scenarios map[string]ScenarioResult `json:"scenarios,omitempty"`
	// Thresholds lists every threshold, passed or not, in plan order.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`

	// ErrorSamples holds up to 10 distinct error messages for diagnosis,
	// with bearer tokens redacted.
	ErrorSamples []string `json:"error_samples"`
}

// ScenarioResult is one scenario's share of a Result.
type ScenarioResult struct {
	Executor          string                  `json:"executor"`
	Requests          int64                   `json:"requests"`
	Failures          int64                   `json:"failures"`
	Aborted           int64                   `json:"aborted"`
	ErrorsByKind      map[string]int64        `json:"errors_by_kind"`
	Iterations        int64                   `json:"iterations"`
	DroppedIterations int64                   `json:"dropped_iterations"`
	PeakUsers         int                     `json:"peak_users"`
	Latency           map[string]LatencyStats `json:"latency"`
	IterationDuration LatencyStats            `json:"iteration_duration"`
}

// ErrorRate is Failures over the requests that got an answer or timed out
// (not aborted, not canceled), in [0, 1].
func (r *Result) ErrorRate() float64 {
	n := r.Requests - r.ErrorsByKind[KindCanceled] - r.ErrorsByKind[KindAborted]
	if n <= 0 {
		return 0
	}
	return float64(r.Failures) / float64(n)
}

// ThresholdsPassed reports whether every threshold passed (true when there
// are none).
func (r *Result) ThresholdsPassed() bool {
	for _, t := range r.Thresholds {
		if !t.Pass {
			return false
		}
	}
	return true
}
