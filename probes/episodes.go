package probes

import (
	"cmp"
	"slices"
	"time"
)

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
	// backend's next state. That state_change is set when the statement
	// that ended the wait finished (for the usual COMMIT: well under a
	// millisecond late) or, for state active, when it began. EndExact is
	// false when End is estimated from the samples around the backend's
	// disappearance or is the last sample (open_at_end).
	EndExact  bool   `json:"end_exact"`
	EndReason string `json:"end_reason"`
	// Aborted: the state was 'idle in transaction (aborted)'.
	Aborted bool `json:"aborted"`
	// Query is the session's last statement (what it was idle after),
	// possibly cut at track_activity_query_size.
	Query           string `json:"query"`
	ApplicationName string `json:"application_name"`
	// ClientAddr is the backend's peer: for sessions through PgBouncer,
	// PgBouncer's address.
	ClientAddr string `json:"client_addr"`
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

// The window in which a vanished backend counts as killed by
// idle_in_transaction_session_timeout. The timer cannot fire before
// Start+timeout (timeoutEarly covers the few milliseconds between now() and
// the moment the activity snapshot is read); the killed backend leaves
// pg_stat_activity as it exits, which a busy server may take a while to do
// (timeoutLate).
const (
	timeoutEarly = 50 * time.Millisecond
	timeoutLate  = 500 * time.Millisecond
)

// backendKey identifies a backend across samples: PIDs are reused.
type backendKey struct {
	pid   int32
	start time.Time
}

type openEpisode struct {
	ep       Episode
	lastSeen time.Time // server time of the last sample that saw it
}

// tracker turns successive samples of pg_stat_activity into episodes. It
// needs the rows of successful samples only: a failed sample simply widens
// the window in which a vanished backend may have gone.
type tracker struct {
	timeout time.Duration // idle_in_transaction_session_timeout; 0 = off
	open    map[backendKey]*openEpisode
}

func newTracker(timeout time.Duration) *tracker {
	return &tracker{timeout: timeout, open: make(map[backendKey]*openEpisode)}
}

// observe takes the rows of a sample read at now and returns the episodes
// that ended since the previous one.
func (t *tracker) observe(now time.Time, rows []backendRow) []Episode {
	var done []Episode
	seen := make(map[backendKey]bool, len(t.open))
	for i := range rows {
		r := &rows[i]
		k := backendKey{r.PID, r.BackendStart}
		stateChange := r.StateChange
		if stateChange.IsZero() {
			stateChange = now
		}
		if o := t.open[k]; o != nil {
			seen[k] = true
			if isIdleInTx(r.State) && stateChange.Equal(o.ep.Start) {
				o.lastSeen = now
				continue
			}
			done = append(done, finish(o.ep, stateChange, true, EndReleased))
			delete(t.open, k)
		}
		if isIdleInTx(r.State) {
			seen[k] = true
			t.open[k] = &openEpisode{lastSeen: now, ep: Episode{
				PID:             r.PID,
				BackendStart:    r.BackendStart,
				Start:           stateChange,
				Aborted:         r.State == stateIdleInTxAborted,
				Query:           r.Query,
				ApplicationName: r.ApplicationName,
				ClientAddr:      r.ClientAddr,
			}}
		}
	}
	gone := len(done)
	for k, o := range t.open {
		if seen[k] {
			continue
		}
		done = append(done, t.vanished(o, now))
		delete(t.open, k)
	}
	sortEpisodes(done[gone:])
	return done
}

// vanished ends an episode whose backend was in the sample at o.lastSeen
// and gone from the one at now. It went somewhere in between: End is the
// middle of that window (lastSeen + half an interval when no sample failed).
func (t *tracker) vanished(o *openEpisode, now time.Time) Episode {
	end := o.lastSeen.Add(now.Sub(o.lastSeen) / 2)
	reason := EndTerminated
	if t.timeout > 0 {
		due := o.ep.Start.Add(t.timeout)
		if o.lastSeen.Before(due.Add(timeoutLate)) && !now.Before(due.Add(-timeoutEarly)) {
			reason = EndTimeout
		}
	}
	return finish(o.ep, end, false, reason)
}

// close ends the episodes still open when sampling stops, at the last
// successful sample.
func (t *tracker) close() []Episode {
	var done []Episode
	for k, o := range t.open {
		done = append(done, finish(o.ep, o.lastSeen, false, EndOpenAtEnd))
		delete(t.open, k)
	}
	sortEpisodes(done)
	return done
}

// sortEpisodes orders episodes found in map order, so that output is
// deterministic.
func sortEpisodes(eps []Episode) {
	slices.SortFunc(eps, func(a, b Episode) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.PID, b.PID))
	})
}

func finish(ep Episode, end time.Time, exact bool, reason string) Episode {
	if end.Before(ep.Start) {
		end = ep.Start
	}
	ep.End = end
	ep.HoldSeconds = end.Sub(ep.Start).Seconds()
	ep.EndExact = exact
	ep.EndReason = reason
	return ep
}
