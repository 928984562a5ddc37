package scenarios

import "time"

// LatencyStats summarizes one latency histogram, in milliseconds.
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
// JSON; Config is the resolved configuration (defaults applied, no tokens).
type Result struct {
	Config  Config    `json:"config"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Interrupted is set when the run's context ended before Duration.
	Interrupted bool `json:"interrupted"`

	// Requests counts every request sent; an initialize handshake counts
	// once. Failures excludes kind "canceled" (requests we aborted because
	// the run was interrupted). ErrorsByKind has every kind, zero or not.
	Requests     int64            `json:"requests"`
	Failures     int64            `json:"failures"`
	ErrorsByKind map[string]int64 `json:"errors_by_kind"`
	Iterations   int64            `json:"iterations"`
	// Reinits counts re-initializations after the target answered 404 to
	// a request carrying a session id (session expired).
	Reinits int64 `json:"reinits"`
	// InitRetries counts initialize attempts repeated after a failure;
	// AbortedUsers the users that gave up after maxInitAttempts failures.
	InitRetries  int64 `json:"init_retries"`
	AbortedUsers int64 `json:"aborted_users"`
	PeakUsers    int   `json:"peak_users"`

	// Latency by operation ("initialize", "tools/list", "tools/call",
	// "ping"), by tool ("tools/call:<name>"), and "all" (every operation).
	// Canceled requests are not included.
	Latency map[string]LatencyStats `json:"latency"`

	// ErrorSamples holds up to 10 distinct error messages for diagnosis,
	// with bearer tokens redacted.
	ErrorSamples []string `json:"error_samples"`
}

// ErrorRate is Failures over requests that were not canceled, in [0, 1].
func (r *Result) ErrorRate() float64 {
	n := r.Requests - r.ErrorsByKind[KindCanceled]
	if n <= 0 {
		return 0
	}
	return float64(r.Failures) / float64(n)
}
