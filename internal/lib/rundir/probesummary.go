package rundir

import "time"

// ProbeSummary is what the probe saw over its whole run: summary.json's
// "probe" section and leakbench probe's probe-summary.json.
type ProbeSummary struct {
	Samples int `json:"samples"`
	// FailedSamples counts samples with an Error (any source); GapSamples
	// those whose PostgreSQL read failed.
	FailedSamples int `json:"failed_samples"`
	GapSamples    int `json:"gap_samples"`
	// SlowSamples took longer than the interval; SkippedTicks is how many
	// ticks they made the Poller miss.
	SlowSamples            int     `json:"slow_samples"`
	SkippedTicks           int     `json:"skipped_ticks"`
	MaxSampleSeconds       float64 `json:"max_sample_seconds"`
	IdleInTxTimeoutSeconds float64 `json:"idle_in_tx_timeout_seconds"`
	// MaxStuckIdleInTx and MaxIdleInTx are maxima at one instant; MaxIdleInTx
	// counts both idle-in-transaction states.
	MaxStuckIdleInTx int `json:"max_stuck_idle_in_tx"`
	MaxIdleInTx      int `json:"max_idle_in_tx"`
	Episodes         int `json:"episodes"`
	// StuckEpisodes: HoldSeconds >= StuckAfter.
	StuckEpisodes int `json:"stuck_episodes"`
	// TimeoutTerminated: episodes with EndReason "timeout".
	TimeoutTerminated int `json:"timeout_terminated"`
	// EndReasons counts episodes by EndReason.
	EndReasons         map[string]int `json:"end_reasons"`
	LongestHoldSeconds float64        `json:"longest_hold_seconds"`
	// Release latency over all episodes, nearest-rank percentiles: exact
	// up to maxExactHolds episodes, beyond that to three significant
	// digits (an HDR histogram); the maximum is always exact.
	ReleaseP50Seconds float64 `json:"release_p50_seconds"`
	ReleaseP99Seconds float64 `json:"release_p99_seconds"`
	ReleaseMaxSeconds float64 `json:"release_max_seconds"`

	// pg_stat_database: whether it was read, and its changes summed over
	// the samples (what happened between the first and the last sample).
	DatabaseSampled        bool    `json:"database_sampled"`
	XactCommitTotal        int64   `json:"xact_commit_total"`
	XactRollbackTotal      int64   `json:"xact_rollback_total"`
	IdleInTxSecondsTotal   float64 `json:"idle_in_tx_seconds_total"`
	SessionsFatalTotal     int64   `json:"sessions_fatal_total"`
	SessionsKilledTotal    int64   `json:"sessions_killed_total"`
	SessionsAbandonedTotal int64   `json:"sessions_abandoned_total"`
	// TimeoutUnconfirmed is how many "timeout" episodes sessions_fatal does
	// not account for: each backend idle_in_transaction_session_timeout
	// kills adds one to sessions_fatal, so a positive value means some
	// were ended otherwise (or the statistics were reset). Meaningful only
	// with DatabaseSampled.
	TimeoutUnconfirmed int `json:"timeout_unconfirmed"`
	// ProbeXactsTotal is the probe's own share of the transactions
	// counted (DatabaseSample.ProbeXacts summed); DatabaseResets how many
	// reads found a counter gone back (DatabaseSample.Reset), each one
	// window whose change is unknown and left out of the totals.
	ProbeXactsTotal int64 `json:"probe_xacts_total,omitempty"`
	DatabaseResets  int   `json:"database_resets,omitempty"`
	// Hold is the mean time a transaction held its connection, by
	// Little's law on the database's counters; nil when pg_stat_database
	// was not read twice.
	Hold *Hold `json:"hold,omitempty"`
	// Server is what the probe read of the server's connection limits at
	// start; nil when it did not read them (a file written before it did,
	// or a summary rebuilt from the files).
	Server *ServerLimits `json:"server,omitempty"`

	PgBouncerSampled        bool    `json:"pgbouncer_sampled"`
	PgBouncerMaxClWaiting   int     `json:"pgbouncer_max_cl_waiting"`
	PgBouncerMaxWaitSeconds float64 `json:"pgbouncer_max_wait_seconds"`
	// PoolExhausted: some sample had clients waiting with no server
	// connection being opened for them (PoolSample.Exhausted).
	// PoolExhaustedSeconds adds up the time from each such sample back to
	// the previous PgBouncer sample (at most a second each);
	// PoolExhaustedSpans counts the runs of consecutive such samples.
	PoolExhausted        bool    `json:"pool_exhausted"`
	PoolExhaustedSeconds float64 `json:"pool_exhausted_seconds"`
	PoolExhaustedSpans   int     `json:"pool_exhausted_spans"`
	// PgBouncerPoolSize is the watched database's pool_size in PgBouncer
	// (SHOW DATABASES: its own, else default_pool_size), read at start;
	// 0 when it was not read.
	PgBouncerPoolSize int `json:"pgbouncer_pool_size,omitempty"`
	// SHOW STATS changes summed over the samples.
	PgBouncerXactsTotal       int64   `json:"pgbouncer_xacts_total"`
	PgBouncerWaitSecondsTotal float64 `json:"pgbouncer_wait_seconds_total"`
	// StuckEpisodesLinked: stuck episodes tied to a PgBouncer server.
	StuckEpisodesLinked int `json:"stuck_episodes_linked"`
	// MalformedComments counts sqlcommenter comments the probe could not
	// use (unterminated or cut, bad escapes, a traceparent not of the W3C
	// form): ignored, never an error.
	MalformedComments int64 `json:"malformed_comments"`

	// The service's own pool, from the scrapes. AppPoolSaturatedSeconds
	// adds up the time from each scrape with acquired >= max > 0 back to
	// the previous scrape (at most two scrape intervals each);
	// AppPoolAcquireWaits, …WaitSeconds and …CanceledAcquires are the
	// counters' increase over the run.
	AppPoolSampled             bool    `json:"app_pool_sampled"`
	AppPoolMaxAcquired         float64 `json:"app_pool_max_acquired"`
	AppPoolMax                 float64 `json:"app_pool_max"`
	AppPoolSaturatedSeconds    float64 `json:"app_pool_saturated_seconds"`
	AppPoolAcquireWaits        float64 `json:"app_pool_acquire_waits"`
	AppPoolAcquireWaitSeconds  float64 `json:"app_pool_acquire_wait_seconds"`
	AppPoolCanceledAcquires    float64 `json:"app_pool_canceled_acquires"`
	AppPoolMaxUnclosedSessions float64 `json:"app_pool_max_unclosed_sessions"`
	AppPoolMaxWaiting          float64 `json:"app_pool_max_waiting"`
	// AppPoolUses and AppPoolUseSeconds are the increase over the run of
	// the service's own count of checkouts that returned their connection
	// and of the seconds they held it (OpenTelemetry's
	// db.client.connection.use_time); AppPoolUseMeanSeconds is their
	// ratio: the service's view of release latency, beside the
	// database's (ReleaseP50Seconds …). Omitted when the service exports no
	// use time.
	AppPoolUses           float64 `json:"app_pool_uses,omitempty"`
	AppPoolUseSeconds     float64 `json:"app_pool_use_seconds,omitempty"`
	AppPoolUseMeanSeconds float64 `json:"app_pool_use_mean_seconds,omitempty"`
	// AppPoolUseQuantiles and AppPoolWaitQuantiles: the p50 and p95 of
	// the use time and wait time, estimated from the increase of their
	// histograms' buckets over the run. Omitted when the service exports
	// no buckets (a mean is all there is then).
	AppPoolUseQuantiles  *PoolTimeQuantiles `json:"app_pool_use_quantiles,omitempty"`
	AppPoolWaitQuantiles *PoolTimeQuantiles `json:"app_pool_wait_quantiles,omitempty"`

	// Culprits group the stuck episodes by the fingerprint of their last
	// query and their application name, most episodes first, then most
	// total hold time. At most maxCulprits (500) are kept: when a new one
	// comes and there is no room, the one with the fewest episodes (the
	// oldest among equals) makes room.
	Culprits []Culprit `json:"culprits"`
	// Warnings lists every kind of failure of a source, in the order first
	// seen.
	Warnings          []Warning `json:"warnings"`
	StuckAfterSeconds float64   `json:"stuck_after_seconds"`
	IntervalSeconds   float64   `json:"interval_seconds"`
}

// ServerLimits are PostgreSQL's connection settings as the probe read
// them at start.
type ServerLimits struct {
	MaxConnections               int `json:"max_connections"`
	SuperuserReservedConnections int `json:"superuser_reserved_connections"`
	// ReservedConnections is reserved_connections (for pg_use_reserved_connections
	// members, PostgreSQL 16+); nil before 16, where it does not exist.
	ReservedConnections *int `json:"reserved_connections,omitempty"`
}

// Reserved is how many of MaxConnections ordinary roles cannot have.
func (l ServerLimits) Reserved() int {
	n := l.SuperuserReservedConnections
	if l.ReservedConnections != nil {
		n += *l.ReservedConnections
	}
	return n
}

// Culprit is one kind of statement that sessions were stuck after.
type Culprit struct {
	Fingerprint string `json:"fingerprint"`
	// ExampleQuery is the first such episode's query: masked (querytext.Mask)
	// unless Config.KeepQueryText is set, control characters replaced
	// either way.
	ExampleQuery     string  `json:"example_query"`
	ApplicationName  string  `json:"application_name"`
	Episodes         int     `json:"episodes"`
	TotalHoldSeconds float64 `json:"total_hold_seconds"`
	MaxHoldSeconds   float64 `json:"max_hold_seconds"`
	// ClientAddr is the backend's peer of the culprit's first episode
	// (PgBouncer's address for pooled sessions); AppClientAddr the
	// application's own address as PgBouncer saw it, when linked.
	ClientAddr    string `json:"client_addr"`
	AppClientAddr string `json:"app_client_addr,omitempty"`
}

// Warning is a source of the probe failing, or working again. Sources are
// "postgres", "pgbouncer" and "scrape URL". Messages say what to do when
// the probe knows.
type Warning struct {
	Source  string    `json:"source"`
	Message string    `json:"message"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	// Count is how many reads failed this way.
	Count int `json:"count"`
	// Recovered: the source works again (the callback's last word on an
	// episode of failures; never in Summary.Warnings).
	Recovered bool `json:"recovered,omitempty"`
}
