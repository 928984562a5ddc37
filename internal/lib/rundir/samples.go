package rundir

import (
	"slices"
	"strings"
	"time"
)

// Sample is one look at the watched database: pg_stat_activity counts and
// ages, pg_stat_database deltas, PgBouncer's pools when a PgBouncer is
// watched, and the service's own pool when a scrape finished since the
// previous sample. Time is the server's now() when the PostgreSQL read
// succeeded, else the probe's clock.
type Sample struct {
	Time time.Time `json:"time"`
	// TookSeconds is how long the sample took to read, all sources.
	TookSeconds float64     `json:"took_seconds"`
	States      StateCounts `json:"states"`
	// StuckIdleInTx counts backends idle in transaction (either state) for
	// StuckAfter or longer.
	StuckIdleInTx int `json:"stuck_idle_in_tx"`
	// OldestIdleInTxSeconds is the age of the oldest idle-in-transaction
	// episode; OldestXactSeconds that of the oldest open transaction, busy
	// or not.
	OldestIdleInTxSeconds float64 `json:"oldest_idle_in_tx_seconds"`
	OldestXactSeconds     float64 `json:"oldest_xact_seconds"`
	// OldestIdleInTx is the oldest open episode, nil when there is none.
	OldestIdleInTx *OpenEpisode `json:"oldest_idle_in_tx,omitempty"`
	// Database is pg_stat_database's change since the previous read, in
	// the samples that read it: one a second. Nil in the others, on the
	// first read and on a gap; marked Reset, with no counts, after a
	// statistics reset.
	Database  *DatabaseSample `json:"database,omitempty"`
	PgBouncer *PoolSample     `json:"pgbouncer,omitempty"`
	// AppPool is the service's own pool, summed over the scrape targets
	// that answered, in the sample taken just after a scrape finished;
	// nil in the others.
	AppPool *AppPoolSample `json:"app_pool,omitempty"`
	// Apps are the watched database's client backends (the probe's own
	// aside) grouped by application — application_name, else the client
	// address — as the database sees them: how many each has, by state.
	// This is the service's pool seen from the server, for any stack.
	Apps []AppConns `json:"apps,omitempty"`
	// Gap: the PostgreSQL read failed; the counts are zero and episode
	// tracking skipped this sample.
	Gap bool `json:"gap,omitempty"`
	// SkippedTicks counts the ticks missed before this sample because the
	// previous one took longer than the interval.
	SkippedTicks int `json:"skipped_ticks,omitempty"`
	// Error says what failed, sources separated by "; ".
	Error string `json:"error,omitempty"`
}

// StateCounts counts client backends of the database by pg_stat_activity
// state.
type StateCounts struct {
	Active          int `json:"active"`
	Idle            int `json:"idle"`
	IdleInTx        int `json:"idle_in_tx"`
	IdleInTxAborted int `json:"idle_in_tx_aborted"`
	// Other: fastpath function call, disabled (track_activities off), or a
	// state the probe may not see.
	Other int `json:"other"`
}

// AppConns is one application's backends at one sample.
type AppConns struct {
	// Name is the backends' application_name; when they set none, their
	// client address (ByAddress), or "local socket" for Unix-socket
	// clients.
	Name      string `json:"name"`
	ByAddress bool   `json:"by_address,omitempty"`
	StateCounts
	// LastStateChange is the latest state_change among the application's
	// backends: since then none of them started or ended a statement.
	LastStateChange time.Time `json:"last_state_change"`
}

// Total is how many backends the application has.
func (a AppConns) Total() int {
	return a.Active + a.Idle + a.IdleInTx + a.IdleInTxAborted + a.Other
}

// OpenEpisode is an episode still going on.
type OpenEpisode struct {
	PID             int32     `json:"pid"`
	Start           time.Time `json:"start"`
	AgeSeconds      float64   `json:"age_seconds"`
	Fingerprint     string    `json:"fingerprint"`
	ApplicationName string    `json:"application_name"`
}

// DatabaseSample is the change of the watched database's pg_stat_database
// counters since the previous sample that read them. PostgreSQL publishes
// these when a transaction ends or a session exits (a busy backend at most
// once a second), so they trail pg_stat_activity a little.
type DatabaseSample struct {
	XactCommit   int64 `json:"xact_commit"`
	XactRollback int64 `json:"xact_rollback"`
	// IdleInTxSeconds is time sessions spent idle in transaction
	// (idle_in_transaction_time, PostgreSQL 14+).
	IdleInTxSeconds float64 `json:"idle_in_tx_seconds"`
	// Sessions that ended by a fatal error (idle_in_transaction_session_timeout
	// among them), by an operator (pg_terminate_backend), or by the client
	// going away (PostgreSQL 14+).
	SessionsFatal     int64 `json:"sessions_fatal"`
	SessionsKilled    int64 `json:"sessions_killed"`
	SessionsAbandoned int64 `json:"sessions_abandoned"`
	// ProbeXacts is how many of XactCommit + XactRollback the probe's own
	// statements may account for: those it ran on the watched database
	// between the previous read and this one, as it counted them (each
	// autocommit statement, and each first prepare on a connection, is one
	// transaction). The probe's backend publishes its counts up to a
	// second late, so this matches the window only on average. 0 when the
	// probe's connection is to another database.
	ProbeXacts int64 `json:"probe_xacts,omitempty"`
	// Reset: a counter went back since the previous read (a statistics
	// reset, pg_stat_reset(), or a server restart that lost them): the
	// change over this window is unknown, every count here is 0, and the
	// next read measures from this one.
	Reset bool `json:"reset,omitempty"`
}

// PoolSample is PgBouncer's SHOW POOLS for the watched database: the
// connection counts summed over its pools (one per user), MaxWaitSeconds
// the longest wait among them (maxwait + maxwait_us). The SHOW STATS
// fields are the change since the previous sample that read them.
type PoolSample struct {
	ClActive  int `json:"cl_active"`
	ClWaiting int `json:"cl_waiting"`
	SvActive  int `json:"sv_active"`
	SvIdle    int `json:"sv_idle"`
	SvUsed    int `json:"sv_used"`
	// SvLogin: server connections being opened.
	SvLogin        int     `json:"sv_login"`
	MaxWaitSeconds float64 `json:"max_wait_seconds"`
	// Exhausted: some pool of the database had clients waiting and no
	// server connection being opened for them — it had nothing left to
	// give. (Clients also wait, briefly, while PgBouncer opens a server
	// connection: that is cl_waiting > 0 without exhaustion.)
	Exhausted bool `json:"exhausted"`
	// Xacts and Queries PgBouncer saw finish (total_xact_count,
	// total_query_count deltas).
	Xacts   int64 `json:"xacts"`
	Queries int64 `json:"queries"`
	// WaitSeconds clients spent waiting for a server (total_wait_time
	// delta); XactSeconds spent in transactions (total_xact_time delta).
	WaitSeconds float64 `json:"wait_seconds"`
	XactSeconds float64 `json:"xact_seconds"`
}

// AppPoolSample is the service's own connection pool as its metrics
// report it. The *Total fields are the service's counters as exported
// (since it started), not deltas. A value the mapping has no series for
// is 0.
type AppPoolSample struct {
	Acquired                float64 `json:"acquired"`
	Idle                    float64 `json:"idle"`
	Total                   float64 `json:"total"`
	Max                     float64 `json:"max"`
	AcquireWaitsTotal       float64 `json:"acquire_waits_total"`
	AcquireWaitSecondsTotal float64 `json:"acquire_wait_seconds_total"`
	CanceledAcquiresTotal   float64 `json:"canceled_acquires_total"`
	UnclosedSessions        float64 `json:"unclosed_sessions"`
	// Waiting: callers waiting for a connection (HikariCP's pending).
	Waiting float64 `json:"waiting,omitempty"`
	// UseSecondsTotal and UsesTotal: how long checkouts held their
	// connection, summed, and how many returned it (OpenTelemetry's
	// db.client.connection.use_time histogram): the service's own view of
	// release latency.
	UseSecondsTotal float64 `json:"use_seconds_total,omitempty"`
	UsesTotal       float64 `json:"uses_total,omitempty"`
	// UseHistogram and WaitHistogram: the buckets of the use-time and
	// wait-time histograms whose _sum the mapping read
	// (db.client.connection.use_time, …wait_time), for their percentiles;
	// nil when the exporter has no buckets (a summary, a counter) or
	// when series summed together disagree on their bucket bounds.
	UseHistogram  *Histogram `json:"use_histogram,omitempty"`
	WaitHistogram *Histogram `json:"wait_histogram,omitempty"`
	// Mapping names the PoolMapping read ("gateway", "go_sql", …;
	// comma-separated when targets differ); Targets how many targets
	// answered.
	Mapping string `json:"mapping"`
	Targets int    `json:"targets"`
}

// Add sums another target's pool into a.
func (a *AppPoolSample) Add(b AppPoolSample) {
	a.Acquired += b.Acquired
	a.Idle += b.Idle
	a.Total += b.Total
	a.Max += b.Max
	a.AcquireWaitsTotal += b.AcquireWaitsTotal
	a.AcquireWaitSecondsTotal += b.AcquireWaitSecondsTotal
	a.CanceledAcquiresTotal += b.CanceledAcquiresTotal
	a.UnclosedSessions += b.UnclosedSessions
	a.Waiting += b.Waiting
	a.UseSecondsTotal += b.UseSecondsTotal
	a.UsesTotal += b.UsesTotal
	if a.Targets == 0 { // a's first target
		a.UseHistogram, a.WaitHistogram = b.UseHistogram.Clone(), b.WaitHistogram.Clone()
	} else {
		a.UseHistogram, a.WaitHistogram = a.UseHistogram.Plus(b.UseHistogram), a.WaitHistogram.Plus(b.WaitHistogram)
	}
	a.Targets += b.Targets
	switch {
	case a.Mapping == "":
		a.Mapping = b.Mapping
	case b.Mapping != "" && !slices.Contains(strings.Split(a.Mapping, ","), b.Mapping):
		a.Mapping += "," + b.Mapping
	}
}
