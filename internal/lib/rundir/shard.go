package rundir

import (
	"encoding/json"
	"time"
)

// SeriesState is series.json: everything the engine counted in a run, in
// the form runs are merged from (leakbench merge). Latency histograms are
// beside it in histograms.hlog, one per series, tagged with Series[i].Tag.
// scenarios/FORMAT.md describes every field.
type SeriesState struct {
	// Segment is the shard of the plan the run played ("i/N"; "0/1": the
	// whole plan); Plan the whole plan, resolved, without tokens
	// (plan.Plan's JSON; the engine reads it back to merge).
	Segment string          `json:"segment"`
	Plan    json.RawMessage `json:"plan"`
	// StartAt is the common start the shard was given (zero: none);
	// Started and Ended bound its load.
	StartAt   time.Time `json:"start_at,omitzero"`
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended"`
	EndReason string    `json:"end_reason"`
	// PeakUsers and MinUsers are the run's own user gauges (the most
	// users at once, the fewest while running).
	PeakUsers int64 `json:"peak_users"`
	MinUsers  int64 `json:"min_users"`

	Series    []SeriesCounts   `json:"series"`
	Scenarios []ScenarioCounts `json:"scenarios"`
	Checks    []CheckResult    `json:"checks,omitempty"`
	// ErrorSamples are the run's error samples (LoadResult.ErrorSamples).
	ErrorSamples []string `json:"error_samples"`
	// FirstErrors are the shard's own (LoadResult.FirstErrors).
	FirstErrors map[string]FirstError `json:"first_errors,omitempty"`
	// Generator is the shard's own self-check, and LatenessTag the tag of
	// its lateness histogram in histograms.hlog, so that a merge states
	// the shards' lateness exactly (absent in shards written before it).
	Generator   *Generator `json:"generator,omitempty"`
	LatenessTag string     `json:"lateness_tag,omitempty"`
}

// SeriesCounts are the counters of one series: a scenario's requests of
// one method (and tool, prompt or http step name; http steps also by
// status), or its iterations (Method "iteration").
type SeriesCounts struct {
	// Tag is the series' histogram's tag in histograms.hlog.
	Tag      string `json:"tag"`
	Scenario string `json:"scenario"`
	// Method is an MCP method, "iteration" or "http".
	Method string `json:"method"`
	Name   string `json:"name,omitempty"`
	Status int    `json:"status,omitempty"`
	// Requests sent; Failed, Aborted and Cancelled of them; Kinds counts
	// them by error kind (only kinds seen).
	Requests  int64            `json:"requests"`
	Failed    int64            `json:"failed"`
	Aborted   int64            `json:"aborted"`
	Cancelled int64            `json:"cancelled"`
	Kinds     map[string]int64 `json:"kinds,omitempty"`
}

// ScenarioCounts are one scenario's counters and user gauges.
type ScenarioCounts struct {
	Name              string           `json:"name"`
	Requests          int64            `json:"requests"`
	Failures          int64            `json:"failures"`
	Aborted           int64            `json:"aborted"`
	Iterations        int64            `json:"iterations"`
	DroppedIterations int64            `json:"dropped_iterations"`
	Kinds             map[string]int64 `json:"kinds,omitempty"`
	PeakUsers         int64            `json:"peak_users"`
	MinUsers          int64            `json:"min_users"`
	Reinits           int64            `json:"reinits"`
	InitRetries       int64            `json:"init_retries"`
	AbortedUsers      int64            `json:"aborted_users"`
	EndedSessions     int64            `json:"ended_sessions"`
	// Protocol counts the scenario's users by the MCP protocol version
	// they spoke (LoadResult.Protocol).
	Protocol map[string]int64 `json:"protocol,omitempty"`
	// Features is the scenario's share of LoadResult.Features.
	Features *FeatureStats `json:"features,omitempty"`
}
