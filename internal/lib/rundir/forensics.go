package rundir

import "time"

// Forensics is summary.json's forensics section: what the report learned
// from the episodes (episodes.jsonl) and the engine's request index
// (requests.jsonl) about the stuck sessions — leaked or only released
// late, which request left each one, and whom it blocked. Derived by the
// report, as Pool is; reports/SCHEMA.md describes every field.
type Forensics struct {
	// StuckAfterSeconds is the stuck threshold the episodes were judged by.
	StuckAfterSeconds float64 `json:"stuck_after_seconds"`
	// StuckEpisodes are the episodes held StuckAfterSeconds or longer;
	// each is either Leaked or a SlowRelease.
	StuckEpisodes int `json:"stuck_episodes"`
	// Leaked are stuck episodes nobody released: ended by the server's
	// timeout, by a termination, or still open when the probe stopped.
	Leaked int `json:"leaked"`
	// LeakedByReason counts Leaked by end_reason.
	LeakedByReason map[string]int `json:"leaked_by_reason,omitempty"`
	// SlowReleases are stuck episodes the service itself released
	// (end_reason released), only late; SlowReleaseMaxSeconds the longest.
	SlowReleases          int     `json:"slow_releases"`
	SlowReleaseMaxSeconds float64 `json:"slow_release_max_seconds"`
	// ReleaseLimitSeconds is what slow releases are judged by: the
	// release latency's 99th percentile must stay below it (the profile's
	// probe.slow_release, else the stuck threshold).
	ReleaseLimitSeconds float64 `json:"release_limit_seconds"`
	// Saturated: the run ran the service (or the load generator) at its
	// limit — the pool exhausted, or arrival-rate iterations dropped — so
	// a late release may be the machine's slowness; SaturatedReason says
	// which.
	Saturated       bool   `json:"saturated"`
	SaturatedReason string `json:"saturated_reason,omitempty"`

	// Traced are stuck episodes whose last query carried a traceparent
	// (sqlcommenter); Joined those whose trace id the request index knew;
	// JoinedShare is Joined / StuckEpisodes (0 when none).
	Traced      int     `json:"traced"`
	Joined      int     `json:"joined"`
	JoinedShare float64 `json:"joined_share"`
	// RequestsIndexed: the run directory had a request index (leakbench
	// drove the load).
	RequestsIndexed bool `json:"requests_indexed"`
	// MalformedComments is the probe's count of sqlcommenter comments it
	// could not use (probe.malformed_comments), repeated here.
	MalformedComments int64 `json:"malformed_comments"`
	// ByRequest groups the stuck episodes by the request that left them:
	// method, tool or prompt name and outcome; most episodes first.
	ByRequest []RequestGroup `json:"by_request,omitempty"`
	// Worst are the longest-held stuck episodes (at most 10), with their
	// request.
	Worst []WorstEpisode `json:"worst,omitempty"`
	// First is the earliest stuck episode, with its request: what started
	// the leak (later ones may be its consequences: a pool run dry makes
	// every request time out).
	First *WorstEpisode `json:"first,omitempty"`

	// BlockedBackends and BlockedWaitSeconds: backends that waited on a
	// stuck episode's locks, over all stuck episodes, and their waits
	// summed; EpisodesBlocking the stuck episodes that blocked anyone.
	BlockedBackends    int     `json:"blocked_backends"`
	BlockedWaitSeconds float64 `json:"blocked_wait_seconds"`
	EpisodesBlocking   int     `json:"episodes_blocking"`

	// Without trace context: SentByToken stuck episodes carried one of
	// the run's bearer tokens in their query, which names the users that
	// sent them exactly. TokenJoined of them were tied to a request of
	// those users: the one in flight when the session went idle in
	// transaction, none of their earlier requests given up by the client
	// (a service may still be running a request its client abandoned).
	// The others had several such requests or an abandoned one before
	// (TokenAmbiguous), or none (TokenNoCandidate).
	SentByToken      int `json:"sent_by_token,omitempty"`
	TokenJoined      int `json:"token_joined,omitempty"`
	TokenAmbiguous   int `json:"token_ambiguous,omitempty"`
	TokenNoCandidate int `json:"token_no_candidate,omitempty"`
}

// RequestGroup is the stuck episodes left by one kind of request.
type RequestGroup struct {
	Method  string `json:"method"`
	Name    string `json:"name,omitempty"`
	Outcome string `json:"outcome"`
	// Episodes, with their hold times summed and the longest.
	Episodes         int     `json:"episodes"`
	TotalHoldSeconds float64 `json:"total_hold_seconds"`
	MaxHoldSeconds   float64 `json:"max_hold_seconds"`
	// MeanRequestSeconds is how long those requests lasted on the client
	// (for an aborted one: how long the client waited before giving up).
	MeanRequestSeconds float64 `json:"mean_request_seconds"`
}

// WorstEpisode is one stuck episode of Forensics.Worst.
type WorstEpisode struct {
	PID         int32     `json:"pid"`
	Start       time.Time `json:"start"`
	HoldSeconds float64   `json:"hold_seconds"`
	EndReason   string    `json:"end_reason"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	TraceID     string    `json:"trace_id,omitempty"`
	// Request is the request that left it; nil when not joined. JoinedBy
	// says how it was joined: JoinedByTrace (the trace id its query
	// carried, exact) or JoinedByToken (the one request in flight of the
	// users whose bearer token its query carried, none of their earlier
	// requests given up).
	Request  *EpisodeRequest `json:"request,omitempty"`
	JoinedBy string          `json:"joined_by,omitempty"`
	// Blocked and BlockedWaitSeconds: backends that waited on its locks.
	Blocked            int     `json:"blocked,omitempty"`
	BlockedWaitSeconds float64 `json:"blocked_wait_seconds,omitempty"`
}

// WorstEpisode.JoinedBy values.
const (
	JoinedByTrace = "trace context"
	JoinedByToken = "bearer token"
)

// EpisodeRequest is the engine's record of the request whose trace id an
// episode's last query carried: who sent it, what it was, and what the
// client made of it.
type EpisodeRequest struct {
	User      int       `json:"user"`
	Scenario  string    `json:"scenario"`
	Iteration int64     `json:"iteration"`
	Method    string    `json:"method"`
	Name      string    `json:"name,omitempty"`
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended"`
	// Outcome: ok, failed, aborted, timeout or canceled; Kind the failure's
	// kind when failed.
	Outcome string `json:"outcome"`
	Kind    string `json:"kind,omitempty"`
}
