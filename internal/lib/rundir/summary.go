package rundir

import "time"

// SchemaVersion is the version of summary.json and compare.json. It changes
// when a field changes meaning or disappears; adding a field keeps it.
const SchemaVersion = 1

// How a run ended.
const (
	EndCompleted   = "completed"
	EndInterrupted = "interrupted"
	EndFailed      = "failed"
	// EndIncomplete: the run wrote no summary (it was killed); the report
	// was rebuilt from the probe's files.
	EndIncomplete = "incomplete"
)

// Environment records what the run ran against.
type Environment struct {
	Provider               string  `json:"provider"`
	Variant                string  `json:"variant"`
	PostgresVersion        string  `json:"postgres_version"`
	PgBouncerVersion       string  `json:"pgbouncer_version"`
	IdleInTxTimeoutSeconds float64 `json:"idle_in_transaction_session_timeout_seconds"`
	MaxConnections         int     `json:"max_connections"`
	PoolMode               string  `json:"pool_mode"`
	PgBouncerPoolSize      int     `json:"pgbouncer_pool_size"`
	GatewayPoolSize        int     `json:"gateway_pool_size"`
	Target                 string  `json:"target"`
	// Database is the database the probe watched.
	Database         string `json:"database,omitempty"`
	LeakbenchVersion string `json:"leakbench_version"`
	// LeakbenchCommit is the VCS revision leakbench was built from, when
	// the build recorded one.
	LeakbenchCommit string `json:"leakbench_commit,omitempty"`
	// LoadOnly: a run against the user's own service without a database
	// to probe (no --probe-dsn): summary.json has no probe section, by
	// design.
	LoadOnly bool `json:"load_only,omitempty"`
}

// Summary is one run's summary.json.
type Summary struct {
	SchemaVersion int           `json:"schema_version"`
	Name          string        `json:"name"`
	Profile       string        `json:"profile"`
	Started       time.Time     `json:"started"`
	Ended         time.Time     `json:"ended"`
	EndReason     string        `json:"end_reason"`
	Error         string        `json:"error,omitempty"`
	Environment   Environment   `json:"environment"`
	Probe         *ProbeSummary `json:"probe"`
	Load          *LoadResult   `json:"load"`
	// Incomplete: the run was killed before it wrote its summary; this one
	// was rebuilt by the report from the probe's files.
	Incomplete bool `json:"incomplete,omitempty"`
	// Pool is the verdict on the connection pools, derived from the
	// samples by the report.
	Pool *PoolState `json:"pool,omitempty"`
	// Soak is a soak's verdict on each resource's trend (leakbench soak;
	// soak.go); nil for other runs.
	Soak *SoakResult `json:"soak,omitempty"`
	// Forensics is what the report learned about the stuck sessions:
	// leaked or released late, the requests that left them, whom they
	// blocked (see Forensics).
	Forensics *Forensics `json:"forensics,omitempty"`
	// Faults is the run's faults: timeline as played, with each fault's
	// recovery (faults.go); absent without faults.
	Faults []FaultRecord `json:"faults,omitempty"`
	// Sizing is what pool the measured hold asks for (sizing.go); absent
	// for a run without a probe.
	Sizing *Sizing `json:"sizing,omitempty"`
	// Workers is how worker processes played the load (workers.go);
	// absent when one process did.
	Workers *Workers `json:"workers,omitempty"`
	// OTLP is what the run sent to an OpenTelemetry collector (otlp.go);
	// absent when nothing was exported.
	OTLP *OTLPExport `json:"otlp,omitempty"`
}

// PoolState is the verdict on the connection pools — PgBouncer's and the
// service's own — derived from the samples.
//
// The probe's summary has pool figures too (probe.pool_exhausted,
// probe.app_pool_saturated_seconds), but they answer another question:
// the probe adds up every sample with clients queued or the pool at its
// max, so a run with many scattered one-sample blips — a busy, healthy
// pool — adds up to seconds. The verdict is on the longest continuous
// span (two samples or more) of cl_waiting > 0 or acquired >= max, which
// only the time series gives; so the report derives its own, and the
// probe's figures stay in summary.json as recorded (Compare's pinned-pool
// check reads those).
type PoolState struct {
	// Exhausted: the service pool had every connection acquired, or
	// PgBouncer had clients queued, continuously for at least
	// MinExhaustedSeconds over two or more samples; or a PgBouncer client
	// waited that long.
	Exhausted bool `json:"exhausted"`
	// Reason says why, in one line ("" when healthy).
	Reason string `json:"reason"`
	// WorstWaitSeconds is the longest any client waited for a server
	// connection (PgBouncer maxwait).
	WorstWaitSeconds float64 `json:"worst_wait_seconds"`

	PgBouncerSampled      bool `json:"pgbouncer_sampled"`
	PgBouncerMaxClWaiting int  `json:"pgbouncer_max_cl_waiting"`
	// PgBouncerWaitingSeconds is the longest continuous span with
	// cl_waiting > 0.
	PgBouncerWaitingSeconds float64 `json:"pgbouncer_waiting_seconds"`

	AppPoolSampled     bool    `json:"app_pool_sampled"`
	AppPoolMax         float64 `json:"app_pool_max"`
	AppPoolMaxAcquired float64 `json:"app_pool_max_acquired"`
	// AppPoolSaturatedSeconds is the longest continuous span with
	// acquired >= max.
	AppPoolSaturatedSeconds float64 `json:"app_pool_saturated_seconds"`
	// Counter increases over the run: acquires that had to wait, the time
	// they waited in all, and acquires given up (context canceled).
	AppPoolAcquireWaits       float64 `json:"app_pool_acquire_waits"`
	AppPoolAcquireWaitSeconds float64 `json:"app_pool_acquire_wait_seconds"`
	AppPoolCanceledAcquires   float64 `json:"app_pool_canceled_acquires"`
	// AppPoolUnclosedSessions: sessions the service opened and never
	// closed, at the last sample.
	AppPoolUnclosedSessions float64 `json:"app_pool_unclosed_sessions"`

	// Services are the applications whose backends the database showed
	// (the probe's samples' apps): each service's pool as the database
	// sees it, the pinned ones first.
	Services []ServiceConns `json:"services,omitempty"`
	// Pinned: a service's connections were pinned (ServiceConns.Pinned).
	Pinned bool `json:"pinned,omitempty"`
	// JudgedFrom says what Exhausted was judged from: "service pool
	// metrics", "PgBouncer" or "database view" (neither of the others was
	// sampled, so the service's connections as the database saw them);
	// empty when healthy.
	JudgedFrom string `json:"judged_from,omitempty"`
	// MaxClientBackends is the most client backends of the watched
	// database (the probe's own aside) at one sample: 0 means the probe
	// never saw the service connected there.
	MaxClientBackends int `json:"max_client_backends"`
	// PinnedAllowed: the profile relaxed the pinned check
	// (probe.allow_pinned), so a pinned pool is reported but passes.
	PinnedAllowed bool `json:"pinned_allowed,omitempty"`
}

// ServiceConns is one application's connections as the database saw them
// over the run. Pinned is the pool at its maximum with none of it working:
// the application had Max backends, none active, and none had started or
// ended a statement for at least the stuck threshold, while the load ran.
type ServiceConns struct {
	// Name is the application_name, or the client address (ByAddress)
	// for backends that set none.
	Name      string `json:"name"`
	ByAddress bool   `json:"by_address,omitempty"`
	// Max is the most backends it had at one sample; MaxIdleInTx the
	// most of them idle in transaction (either state).
	Max         int  `json:"max"`
	MaxIdleInTx int  `json:"max_idle_in_tx"`
	Pinned      bool `json:"pinned"`
	// PinnedSeconds is the time pinned, in stretches of at least the
	// stuck threshold; PinnedSpans how many; the longest one began at
	// PinnedFrom and lasted LongestPinnedSeconds, with every backend idle
	// in transaction throughout when PinnedAllIdleInTx.
	PinnedSeconds        float64   `json:"pinned_seconds"`
	PinnedSpans          int       `json:"pinned_spans"`
	LongestPinnedSeconds float64   `json:"longest_pinned_seconds"`
	PinnedFrom           time.Time `json:"pinned_from,omitzero"`
	PinnedAllIdleInTx    bool      `json:"pinned_all_idle_in_tx"`
	// RequestsWhilePinned and FailuresWhilePinned count what the virtual
	// users sent, and what failed, in the seconds that ended while it was
	// pinned (load.jsonl); 0 without a load.
	RequestsWhilePinned int64 `json:"requests_while_pinned"`
	FailuresWhilePinned int64 `json:"failures_while_pinned"`
	// BusyAtMaxSeconds is the time, while the load ran, that it had Max
	// backends with every one of them busy (active or in a transaction):
	// its pool saturated, as the database sees it. BusyAtMaxShare is the
	// share of the load's samples so (since it was first seen);
	// LoadSamples how many those were.
	BusyAtMaxSeconds float64 `json:"busy_at_max_seconds,omitempty"`
	BusyAtMaxShare   float64 `json:"busy_at_max_share,omitempty"`
	LoadSamples      int     `json:"load_samples,omitempty"`
}
