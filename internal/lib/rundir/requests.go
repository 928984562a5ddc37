package rundir

import "time"

// Request is one line of requests.jsonl: the engine's record of one MCP
// request (or http step) it sent, keyed by the W3C trace id the request carried
// (scenarios/FORMAT.md describes every field). The engine appends them as
// requests end, in batches (at least once a second), so that a killed run
// keeps what it had flushed; reports join episodes to them by trace id.
type Request struct {
	// TraceID is the request's trace id, 32 lowercase hex digits.
	TraceID   string `json:"trace_id"`
	User      int    `json:"user"`
	Scenario  string `json:"scenario"`
	Iteration int64  `json:"iteration"`
	// Step is the step's position in the scenario's flow, depth first from
	// 0 (choose branches in order); -1 for a start the engine sent by
	// itself (a user without a session): an initialize, or in the
	// 2026-07-28 era a server/discover.
	Step int `json:"step"`
	// Method is the MCP method, or "http" for an http step.
	Method string `json:"method"`
	// Name is the tool or prompt name (tools/call, prompts/get), or an
	// http step's "METHOD name".
	Name  string    `json:"name,omitempty"`
	Start time.Time `json:"start"`
	// Seconds is how long the request lasted on the client: until its
	// answer, its failure, or the client gave up.
	Seconds float64 `json:"seconds"`
	// Outcome: RequestOK, RequestFailed (Kind says how), RequestAborted,
	// RequestTimeout, RequestCanceled.
	Outcome string `json:"outcome"`
	Kind    string `json:"kind,omitempty"`
	// SpanID is the span id the request's traceparent carried (its
	// parent-id), 16 lowercase hex digits: the request's own span, as
	// leakbench exports it over OTLP. Absent in runs from before.
	SpanID string `json:"span_id,omitempty"`
}

// Request.Outcome values.
const (
	// RequestOK: answered without error.
	RequestOK = "ok"
	// RequestFailed: failed (Kind: http_5xx, jsonrpc, conn, …).
	RequestFailed = "failed"
	// RequestAborted: the scenario gave up on it on purpose (abortAfter).
	RequestAborted = "aborted"
	// RequestTimeout: the request timeout fired; the client gave up.
	RequestTimeout = "timeout"
	// RequestCanceled: the run ended while it was in flight.
	RequestCanceled = "canceled"
)
