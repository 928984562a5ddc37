package rundir

import "time"

// Episode is one span during which a backend sat idle in transaction: from
// the server's state_change when it went idle to the moment its transaction
// moved on, ended, or the backend went away.
type Episode struct {
	PID          int32     `json:"pid"`
	BackendStart time.Time `json:"backend_start"`
	// Start is the server's state_change when the backend went idle in
	// transaction.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// HoldSeconds is the release latency, End - Start.
	HoldSeconds float64 `json:"hold_seconds"`
	// EndExact is true when End is the server's state_change for the
	// backend's next state — set when the statement that ended the wait
	// finished (for the usual COMMIT: well under a millisecond late) or,
	// for state active, when it began — or, for a backend that was killed,
	// the time the server logged the kill (Config.ServerLogFile; to the
	// millisecond). EndExact is false when End is estimated from the
	// samples around the backend's disappearance (for a timeout: the moment
	// the timeout was due) or is the last sample (open_at_end).
	EndExact  bool   `json:"end_exact"`
	EndReason string `json:"end_reason"`
	// Aborted: the state was 'idle in transaction (aborted)'.
	Aborted bool `json:"aborted"`
	// Query is the session's last statement (what it was idle after),
	// possibly cut at track_activity_query_size: masked by querytext.Mask
	// unless Config.KeepQueryText is set.
	Query string `json:"query"`
	// Fingerprint is the querytext.Fingerprint of the statement as the server
	// showed it.
	Fingerprint     string `json:"fingerprint,omitempty"`
	ApplicationName string `json:"application_name"`
	// ClientAddr is the backend's peer: for sessions through PgBouncer,
	// PgBouncer's address.
	ClientAddr string `json:"client_addr"`
	// PgBouncer ties the backend to PgBouncer's server connection and the
	// client holding it, when PgBouncer is watched and the episode lasted
	// long enough to be looked up (StuckAfter).
	PgBouncer *BouncerLink `json:"pgbouncer,omitempty"`
	// TraceID and SpanID are the W3C traceparent's ids from a sqlcommenter
	// comment at the end of Query, when it had one; Comment is every
	// key/value of that comment, URL-decoded, values redacted.
	TraceID string            `json:"trace_id,omitempty"`
	SpanID  string            `json:"span_id,omitempty"`
	Comment map[string]string `json:"comment,omitempty"`
	// Blocked and BlockedWaitSeconds: backends that waited on this
	// episode's locks (pg_blocking_pids) while it was open, how many, and
	// their waits as the probe saw them, summed.
	Blocked            int     `json:"blocked,omitempty"`
	BlockedWaitSeconds float64 `json:"blocked_wait_seconds,omitempty"`
	// SentBy names the value leakbench sent that the episode's last query
	// carried as a literal — a bearer token, which drivers that bind
	// parameters on the client (psycopg2, JDBC's simple protocol) put in
	// the statement's text — and so the virtual users that sent it.
	SentBy *SentBy `json:"sent_by,omitempty"`
	// Request is the request whose trace id the episode carried, joined
	// from the run's request index after the load (absent while the run
	// goes, without a trace id, or when leakbench did not send it).
	Request *EpisodeRequest `json:"request,omitempty"`
}

// SentBy is a bearer token of the run found in an episode's query: the
// Token-th of the Tokens the run's users had (user u had token u mod
// Tokens). The token itself is never recorded.
type SentBy struct {
	Token  int `json:"token"`
	Tokens int `json:"tokens"`
}

// BouncerLink is the PgBouncer server connection whose remote_pid is an
// episode's backend, and the client it was linked to.
type BouncerLink struct {
	User     string `json:"user"`
	Database string `json:"database"`
	// ServerLocalPort is PgBouncer's end of the server connection: the
	// backend's client_port in pg_stat_activity.
	ServerLocalPort int `json:"server_local_port"`
	// ServerState: "active" while a client holds the server.
	ServerState string `json:"server_state"`
	// The client: its address as PgBouncer sees it, its application_name
	// and when it connected; empty when no client was linked.
	ClientAddr            string    `json:"client_addr,omitempty"`
	ClientPort            int       `json:"client_port,omitempty"`
	ClientApplicationName string    `json:"client_application_name,omitempty"`
	ClientConnectTime     time.Time `json:"client_connect_time,omitzero"`
}

// Episode.EndReason values.
const (
	// EndReleased: the backend was seen in another state or idle in
	// transaction again after another statement (the transaction went on,
	// committed or rolled back).
	EndReleased = "released"
	// EndTimeout: the backend vanished when idle_in_transaction_session_timeout
	// was due to kill it.
	EndTimeout = "timeout"
	// EndTerminated: the backend vanished at another time (client gone,
	// pg_terminate_backend, server restart).
	EndTerminated = "terminated"
	// EndOpenAtEnd: still idle in transaction when sampling stopped.
	EndOpenAtEnd = "open_at_end"
)
