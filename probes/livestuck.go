package probes

import (
	"cmp"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// StuckTrace is a stuck episode whose query carried a W3C trace id
// (sqlcommenter), as Status shows it while the run plays: what a live view
// needs to name the request that left the session (the trace id is the
// request's, in the engine's requests.jsonl).
type StuckTrace struct {
	TraceID string
	PID     int32
	Start   time.Time
	// HoldSeconds is the hold so far while Open, the episode's after.
	HoldSeconds float64
	Open        bool
	// EndReason is the ended episode's (rundir.Episode), "" while Open.
	EndReason string
	// Fingerprint is the query's, literals removed.
	Fingerprint     string
	ApplicationName string
}

// liveStuck bounds Status.Stuck's two halves: at most this many open
// episodes (the oldest) and this many ended ones (the latest).
const liveStuck = 32

// stuckOpen lists the open episodes idle in transaction for after or more
// at now whose query carried a trace id, the oldest first, at most
// liveStuck.
func (t *tracker) stuckOpen(now time.Time, after time.Duration) []StuckTrace {
	var out []StuckTrace
	for _, o := range t.open {
		if o.ep.TraceID == "" || now.Sub(o.ep.Start) < after {
			continue
		}
		if o.fingerprint == "" {
			o.fingerprint = t.texts.get(o.base).fingerprint
		}
		out = append(out, StuckTrace{TraceID: o.ep.TraceID, PID: o.ep.PID, Start: o.ep.Start, HoldSeconds: now.Sub(o.ep.Start).Seconds(),
			Open: true, Fingerprint: o.fingerprint, ApplicationName: o.ep.ApplicationName})
	}
	slices.SortFunc(out, func(a, b StuckTrace) int { return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.PID, b.PID)) })
	return out[:min(len(out), liveStuck)]
}

// stuckEnded is e as Status lists it, when it was stuck and carried a
// trace id.
func stuckEnded(e *rundir.Episode, after time.Duration) (StuckTrace, bool) {
	if e.TraceID == "" || e.HoldSeconds < after.Seconds() {
		return StuckTrace{}, false
	}
	return StuckTrace{TraceID: e.TraceID, PID: e.PID, Start: e.Start, HoldSeconds: e.HoldSeconds, EndReason: e.EndReason,
		Fingerprint: e.Fingerprint, ApplicationName: e.ApplicationName}, true
}
