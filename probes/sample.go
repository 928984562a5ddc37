package probes

import (
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

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
	StateChange     time.Time
	State           string
	Query           string
	ApplicationName string
	ClientAddr      string
}

// measure fills s from a successful read of the server: its time, state
// counts and pg_stat_database change as read, the oldest transaction's
// age, and the idle-in-transaction ages from the rows.
func measure(s *rundir.Sample, a activity, stuckAfter time.Duration) {
	s.Time, s.States, s.Database, s.Apps = a.now, a.states, a.db, a.apps
	if !a.oldestXact.IsZero() {
		s.OldestXactSeconds = max(a.now.Sub(a.oldestXact).Seconds(), 0)
	}
	for _, r := range a.rows {
		if isIdleInTx(r.State) && !r.StateChange.IsZero() {
			age := a.now.Sub(r.StateChange)
			s.OldestIdleInTxSeconds = max(s.OldestIdleInTxSeconds, age.Seconds())
			if age >= stuckAfter {
				s.StuckIdleInTx++
			}
		}
	}
}
