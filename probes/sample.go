package probes

import "time"

// Sample is one look at the watched database: pg_stat_activity counts and
// ages, and PgBouncer's pools when a PgBouncer is watched. Time is the
// server's now() when the PostgreSQL read succeeded, else the probe's clock.
type Sample struct {
	Time   time.Time   `json:"time"`
	States StateCounts `json:"states"`
	// StuckIdleInTx counts backends idle in transaction (either state) for
	// StuckAfter or longer.
	StuckIdleInTx int `json:"stuck_idle_in_tx"`
	// OldestIdleInTxSeconds is the age of the oldest idle-in-transaction
	// episode; OldestXactSeconds that of the oldest open transaction, busy
	// or not.
	OldestIdleInTxSeconds float64     `json:"oldest_idle_in_tx_seconds"`
	OldestXactSeconds     float64     `json:"oldest_xact_seconds"`
	PgBouncer             *PoolSample `json:"pgbouncer,omitempty"`
	// Error says what failed. A sample whose PostgreSQL read failed is a
	// gap: its counts are zero and episode tracking skips it.
	Error string `json:"error,omitempty"`
}

// StateCounts counts client backends of the database by pg_stat_activity
// state.
type StateCounts struct {
	Active          int `json:"active"`
	Idle            int `json:"idle"`
	IdleInTx        int `json:"idle_in_tx"`
	IdleInTxAborted int `json:"idle_in_tx_aborted"`
	// Other: fastpath function call, disabled, or a state the probe may not
	// see.
	Other int `json:"other"`
}

// PoolSample is PgBouncer's SHOW POOLS for the watched database: the
// connection counts summed over its pools (one per user), MaxWaitSeconds
// the longest wait among them (maxwait + maxwait_us).
type PoolSample struct {
	ClActive       int     `json:"cl_active"`
	ClWaiting      int     `json:"cl_waiting"`
	SvActive       int     `json:"sv_active"`
	SvIdle         int     `json:"sv_idle"`
	SvUsed         int     `json:"sv_used"`
	MaxWaitSeconds float64 `json:"max_wait_seconds"`
}

// pg_stat_activity.state values.
const (
	stateActive          = "active"
	stateIdle            = "idle"
	stateIdleInTx        = "idle in transaction"
	stateIdleInTxAborted = "idle in transaction (aborted)"
)

func isIdleInTx(state string) bool {
	return state == stateIdleInTx || state == stateIdleInTxAborted
}

// backendRow is one client backend as the sampling query returns it.
// Timestamps that are NULL are zero.
type backendRow struct {
	PID             int32
	BackendStart    time.Time
	XactStart       time.Time
	StateChange     time.Time
	State           string
	Query           string
	ApplicationName string
	ClientAddr      string
}

// measure fills the counts and ages of s from the rows read at now.
func measure(s *Sample, now time.Time, rows []backendRow, stuckAfter time.Duration) {
	s.Time = now
	for _, r := range rows {
		switch r.State {
		case stateActive:
			s.States.Active++
		case stateIdle:
			s.States.Idle++
		case stateIdleInTx:
			s.States.IdleInTx++
		case stateIdleInTxAborted:
			s.States.IdleInTxAborted++
		default:
			s.States.Other++
		}
		if !r.XactStart.IsZero() {
			s.OldestXactSeconds = max(s.OldestXactSeconds, now.Sub(r.XactStart).Seconds())
		}
		if isIdleInTx(r.State) && !r.StateChange.IsZero() {
			age := now.Sub(r.StateChange)
			s.OldestIdleInTxSeconds = max(s.OldestIdleInTxSeconds, age.Seconds())
			if age >= stuckAfter {
				s.StuckIdleInTx++
			}
		}
	}
}
