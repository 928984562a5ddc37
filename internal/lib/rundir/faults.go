package rundir

import "time"

// FaultRecord is one fault of a run's faults: timeline as it was played,
// in summary.json's faults list (SCHEMA.md): when it was applied and
// removed, what it did, and how the stack recovered once it was over.
type FaultRecord struct {
	// Name is the fault's label: "db latency", "terminate_backends".
	Name   string `json:"name"`
	Link   string `json:"link,omitempty"`
	Toxic  string `json:"toxic,omitempty"`
	Action string `json:"action,omitempty"`
	// AtSeconds and ForSeconds are the timeline's, from the load's start.
	AtSeconds  float64 `json:"at_seconds"`
	ForSeconds float64 `json:"for_seconds"`
	// Applied and Removed are when the runner applied and removed it
	// (equal for an instant action); Removed is absent when it was never
	// applied or the run ended first (then it was removed at the end).
	Applied *time.Time `json:"applied,omitempty"`
	Removed *time.Time `json:"removed,omitempty"`
	// Error says why applying or removing it failed.
	Error string `json:"error,omitempty"`
	// SessionsKilled is how many backends the fault terminated
	// (terminate_backends) or ended (postgres_restart: the service's
	// backends when the server was stopped).
	SessionsKilled int `json:"sessions_killed"`
	// Recovered: after the fault was removed, the probe saw the pool
	// healthy — no stuck session, no PgBouncer client waiting, the service
	// pool below its max — in every sample for the probe's stuck_after (so
	// that a session leaked just before, not stuck yet, would have shown),
	// before the run ended.
	Recovered bool `json:"recovered"`
	// RecoverySeconds is the time from the fault's removal to the first of
	// those samples (absent when it did not recover).
	RecoverySeconds *float64 `json:"recovery_seconds,omitempty"`
	// ErrorsDuring and ErrorsAfter count the requests that failed (any
	// outcome but ok, from requests.jsonl) that started while the fault
	// was on, and from its removal until recovery (or the end of the run).
	ErrorsDuring int64 `json:"errors_during"`
	ErrorsAfter  int64 `json:"errors_after"`
}
