package rundir

// Hold is how long a transaction kept its database connection busy, on
// average, by Little's law on the database's own counters: the mean
// number of backends in a transaction (active, or idle in one) divided by
// the transactions that ended per second, over the windows between two
// reads of pg_stat_database. summary.json's probe.hold.
type Hold struct {
	// Method names how it was measured, for the reader of the file.
	Method string `json:"method"`
	// Windows and Seconds: the windows counted and their total length.
	Windows int     `json:"windows"`
	Seconds float64 `json:"seconds"`
	// BusyBackendsMean is the mean number of the database's client
	// backends (the probe's own aside) in a transaction over those
	// windows: L.
	BusyBackendsMean float64 `json:"busy_backends_mean"`
	// Xacts is the transactions that ended in them (xact_commit +
	// xact_rollback), the probe's own taken out; XactsPerSecond their
	// rate: λ.
	Xacts          int64   `json:"xacts"`
	XactsPerSecond float64 `json:"xacts_per_second"`
	// MeanSeconds is L / λ: W, the mean time a transaction held its
	// connection. Omitted (with Refused saying why) when no transaction
	// ended in the windows counted.
	MeanSeconds float64 `json:"mean_seconds,omitempty"`
	// ExcludedReset counts the windows left out because a counter went
	// back (a statistics reset or restart: their change is unknown);
	// ExcludedGap those in which a read of the server failed (the mean
	// would rest on part of the window). The first window starts at the
	// first sample that read the server, the sampler's baseline read.
	ExcludedReset int `json:"excluded_reset"`
	ExcludedGap   int `json:"excluded_gap"`
	// Apps are the mean busy backends of each application over the same
	// windows. pg_stat_database does not count transactions by
	// application, so there is no hold per application: only its share
	// of L.
	Apps []AppBusy `json:"apps,omitempty"`
	// Refused says why there is no MeanSeconds; empty when there is.
	Refused string `json:"refused,omitempty"`
}

// AppBusy is one application's mean backends in a transaction.
type AppBusy struct {
	Name             string  `json:"name"`
	ByAddress        bool    `json:"by_address,omitempty"`
	BusyBackendsMean float64 `json:"busy_backends_mean"`
}

// HoldMethod is Hold.Method.
const HoldMethod = "little: busy backends / (xact_commit + xact_rollback per second), pg_stat_database"
