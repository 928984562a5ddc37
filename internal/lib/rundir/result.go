package rundir

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// OpAll is the key of Result.Latency over every method.
const OpAll = "all"

// The error kinds (LoadResult.ErrorsByKind) that are not failures of the
// target; the MCP client (scenarios/mcp) names every kind, and its tests
// hold these two to its names.
const (
	// KindAborted: requests the scenario gave up on (abortAfter).
	KindAborted = "aborted"
	// KindCanceled: requests abandoned because the run was stopped.
	KindCanceled = "canceled"
)

// stringDuration is a duration written as a Go duration string ("30s")
// and read from one or from a number of nanoseconds.
type stringDuration time.Duration

func (d stringDuration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *stringDuration) UnmarshalJSON(b []byte) error {
	var v anyDuration
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	*d = stringDuration(v)
	return nil
}

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

// LoadResult is what the engine measured in a run: summary.json's
// "load" section. It is a plain value that serializes to
// JSON, with no secret in it.
type LoadResult struct {
	// Plan is the plan the run played, resolved (target, defaults) and
	// without tokens: plan.Plan's JSON, the scenario file's shape, which
	// scenariofile.ReadRecorded reads back. Config sums it up.
	Plan   json.RawMessage `json:"plan,omitempty"`
	Config PlanSummary     `json:"config,omitzero"`

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
	// FirstErrors says, for each kind of failure the load saw, when it
	// was first seen and how many users were playing then: where refused
	// connections (or timeouts, 5xx, …) began. Absent when nothing failed,
	// and in results from before it was recorded.
	FirstErrors map[string]FirstError `json:"first_errors,omitempty"`
	// Iterations counts completed passes through a flow;
	// DroppedIterations those an arrival-rate executor could not start:
	// due when no user was free, or reached by their user only after the
	// scenario's end.
	Iterations        int64 `json:"iterations"`
	DroppedIterations int64 `json:"dropped_iterations"`
	// Reinits counts re-initializations after the target answered 404 to
	// a request carrying a session id (session expired).
	Reinits int64 `json:"reinits"`
	// InitRetries counts initialize attempts repeated after a failure;
	// AbortedUsers the users that gave up after maxInitAttempts failures.
	InitRetries  int64 `json:"init_retries"`
	AbortedUsers int64 `json:"aborted_users"`
	// EndedSessions counts sessions ended by endSession steps (none in
	// the 2026-07-28 era, which has no sessions to end).
	EndedSessions int64 `json:"ended_sessions"`
	PeakUsers     int   `json:"peak_users"`
	// Protocol counts the users by the MCP protocol version they spoke:
	// "2026-07-28" (the sessionless era: server/discover where the
	// handshake was) or the 2025 version an initialize handshake agreed
	// on. A user counts once under each version its sessions
	// spoke — normally one, so the counts add up to the users that
	// started; users that never started are not counted. Absent when no
	// user started, and in results from before it was recorded.
	Protocol map[string]int64 `json:"protocol,omitempty"`
	// Features sums up the 2026-07-28 features the users used: cache
	// hits, input round trips, tasks, notification streams (absent when
	// none was used).
	Features *FeatureStats `json:"features,omitempty"`

	// Latency by method ("initialize", "server/discover", "tools/list",
	// "tools/call", ...; a user's start is server/discover in the
	// 2026-07-28 era), by tool and prompt ("tools/call:<name>",
	// "prompts/get:<name>"), and "all" (every method). Aborted and canceled requests are not
	// included. Arrival-rate scenarios measure from the intended start.
	Latency           map[string]LatencyStats `json:"latency"`
	IterationDuration LatencyStats            `json:"iteration_duration"`

	// Scenarios has each scenario's own counters, by name.
	Scenarios map[string]ScenarioResult `json:"scenarios,omitempty"`
	// Thresholds lists every threshold, passed or not, in plan order.
	Thresholds []Threshold `json:"thresholds,omitempty"`

	// ErrorSamples holds up to 10 distinct error messages for diagnosis,
	// with bearer tokens redacted.
	ErrorSamples []string `json:"error_samples"`

	// ScaleChanges lists every change of an externally-controlled
	// scenario's users, in order (absent: none).
	ScaleChanges []ScaleChange `json:"scale_changes,omitempty"`

	// Checks lists every check of the plan's steps by scenario, in plan
	// order, passed or not (the checks metric).
	Checks []CheckResult `json:"checks,omitempty"`
	// HTTP sums up the http steps by "METHOD name" (name: the step's
	// name, else its URL as written). Their requests are also counted in
	// Requests and Failures, not in Latency.
	HTTP map[string]HTTPStats `json:"http,omitempty"`

	// Generator is the load generator's self-check: its CPU, how late its
	// schedule ran, and whether it kept up (absent in runs from before it
	// was recorded).
	Generator *Generator `json:"generator,omitempty"`
}

// CheckResult is one check of one scenario: how often it held.
type CheckResult struct {
	Scenario string `json:"scenario"`
	// Check is its name: its expression unless the step named it.
	Check  string `json:"check"`
	Passes int64  `json:"passes"`
	Fails  int64  `json:"fails"`
	// SampleAnswer is the first answer it failed on (or "(no answer:
	// ERROR)"), secrets redacted, at most 500 characters; empty if it
	// never failed.
	SampleAnswer string `json:"sample_answer,omitempty"`
}

// HTTPStats sums up one http step (method and name) over a run.
type HTTPStats struct {
	// Requests sent; Failures: no answer, a status not expected, or a
	// capture that found nothing.
	Requests int64 `json:"requests"`
	Failures int64 `json:"failures"`
	// Statuses counts the answers by HTTP status.
	Statuses map[string]int64 `json:"statuses"`
	// Latency of the answered requests.
	Latency LatencyStats `json:"latency"`
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
	// Protocol is the scenario's share of LoadResult.Protocol.
	Protocol map[string]int64 `json:"protocol,omitempty"`
}

// ErrorRate is Failures over the requests that got an answer or timed out
// (not aborted, not canceled), in [0, 1].
func (r *LoadResult) ErrorRate() float64 {
	n := r.Requests - r.ErrorsByKind[KindCanceled] - r.ErrorsByKind[KindAborted]
	if n <= 0 {
		return 0
	}
	return float64(r.Failures) / float64(n)
}

// ThresholdsPassed reports whether every threshold passed (true when there
// are none).
func (r *LoadResult) ThresholdsPassed() bool {
	for _, t := range r.Thresholds {
		if !t.Pass {
			return false
		}
	}
	return true
}

// PlanSummary sums up what a run was set to play: the figures a report shows
// beside its plots. Durations are written as Go duration strings.
type PlanSummary struct {
	Target string `json:"target"`
	// Users is the most users the plan runs at once.
	Users int `json:"users"`
	// Duration is the planned length: the end of the latest scenario.
	Duration time.Duration `json:"duration"`
	// RequestTimeout is the plan's per-request timeout (scenarios and
	// steps may set their own).
	RequestTimeout time.Duration `json:"request_timeout"`
}

type planSummaryJSON struct {
	Target         string         `json:"target"`
	Users          int            `json:"users"`
	Duration       stringDuration `json:"duration"`
	RequestTimeout stringDuration `json:"request_timeout"`
}

// MarshalJSON writes c with durations as strings.
func (c PlanSummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(planSummaryJSON{c.Target, c.Users, stringDuration(c.Duration), stringDuration(c.RequestTimeout)})
}

// UnmarshalJSON reads what MarshalJSON writes (durations may also be
// numbers of nanoseconds), and the same keys of older runs' configs.
func (c *PlanSummary) UnmarshalJSON(b []byte) error {
	var w planSummaryJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = PlanSummary{Target: w.Target, Users: w.Users, Duration: time.Duration(w.Duration), RequestTimeout: time.Duration(w.RequestTimeout)}
	return nil
}

// Threshold is the verdict of one threshold of the scenario.
type Threshold struct {
	Metric     string `json:"metric"`     // e.g. mcp_req_duration{method:tools/call}
	Expression string `json:"expression"` // e.g. p(95)<500
	Pass       bool   `json:"pass"`
	// Observed is the value the expression was judged on; NaN when there
	// was nothing to observe, written as null (JSON has no NaN).
	Observed    float64 `json:"observed"`
	AbortOnFail bool    `json:"abort_on_fail"`
	// Samples is how many values the observation rests on (requests,
	// iterations; for gauges 1): 0 means the filter matched nothing.
	Samples int64 `json:"samples"`
}

type thresholdJSON struct {
	Metric      string          `json:"metric"`
	Expression  string          `json:"expression"`
	Pass        bool            `json:"pass"`
	Observed    json.RawMessage `json:"observed"`
	AbortOnFail bool            `json:"abort_on_fail"`
	Samples     int64           `json:"samples"`
}

// MarshalJSON writes a NaN or infinite Observed as null.
func (t Threshold) MarshalJSON() ([]byte, error) {
	obs := json.RawMessage("null")
	if !math.IsNaN(t.Observed) && !math.IsInf(t.Observed, 0) {
		obs = strconv.AppendFloat(nil, t.Observed, 'g', -1, 64)
	}
	return json.Marshal(thresholdJSON{t.Metric, t.Expression, t.Pass, obs, t.AbortOnFail, t.Samples})
}

// UnmarshalJSON reads null, a missing value or anything not a number as
// NaN: a summary with an odd value still reads.
func (t *Threshold) UnmarshalJSON(b []byte) error {
	var w thresholdJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = Threshold{Metric: w.Metric, Expression: w.Expression, Pass: w.Pass, Observed: math.NaN(), AbortOnFail: w.AbortOnFail, Samples: w.Samples}
	if raw := bytes.TrimSpace(w.Observed); len(raw) > 0 {
		if v, err := strconv.ParseFloat(string(raw), 64); err == nil {
			t.Observed = v
		}
	}
	return nil
}

// ObservedString formats the observed value for a report ("n/a" when
// nothing was observed).
func (t Threshold) ObservedString() string {
	if math.IsNaN(t.Observed) || math.IsInf(t.Observed, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(t.Observed, 'g', 6, 64)
}

// FirstError is when the load first saw a failure of one kind.
type FirstError struct {
	At time.Time `json:"at"`
	// ElapsedSeconds is At since the load started.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// ActiveUsers is how many users were playing at At: the process's
	// own count, or in a merged run (shards, workers) every shard's in
	// that second of the merged load.jsonl; 0 when not known (shards
	// that left no load.jsonl): a failure always has a user playing.
	ActiveUsers int64 `json:"active_users"`
}
