package probes

import (
	"cmp"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/querytext"
	"github.com/leakbench/leakbench/probes/serverlog"
	"github.com/leakbench/leakbench/probes/sqlcomment"
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
	ep          rundir.Episode
	lastSeen    time.Time // server time of the last sample that saw it
	fingerprint string    // of ep.Query, computed when first asked for
	base        string    // ep.Query without its sqlcommenter comment
	// waiters are the backends that waited on its locks (locks.go);
	// waitCount and waitedBefore count the earlier waits of backends that
	// waited again.
	waiters      map[backendKey]waiter
	waitCount    int
	waitedBefore float64
	// lookedUp: PgBouncer's servers were read for it. A backend behind
	// PgBouncer is among them from its connection on, so one that was not
	// is not behind it and is not asked for again.
	lookedUp bool
}

// tracker turns successive samples of pg_stat_activity into episodes. It
// needs the rows of successful samples only: a failed sample simply widens
// the window in which a vanished backend may have gone.
type tracker struct {
	timeout time.Duration // idle_in_transaction_session_timeout; 0 = off
	open    map[backendKey]*openEpisode
	seen    map[backendKey]bool // observe's, kept between samples
	// keepQuery: episodes keep their raw query text (Config.KeepQueryText).
	keepQuery bool
	// malformedComments counts sqlcommenter comments that could not be
	// used (package sqlcomment).
	malformedComments int64
	comments          sqlcomment.Reader // reads episodes' comments, values redacted
	texts             queryTexts
	// kills, when set, tells when the server killed a backend; a vanished
	// backend's episode waits up to killWait for its line (pending).
	kills   killFinder
	pending []pendingEnd
	// sent finds the run's bearer tokens in queries (sent.go); nil: none
	// given.
	sent *sentTokens
}

// killFinder finds the server's record of a backend's kill in a time
// window (a serverlog.Log; the tracker's tests give a fixed list).
type killFinder interface {
	Find(pid int32, from, to time.Time) (serverlog.Kill, bool)
}

// pendingEnd is an episode whose backend vanished from the sample at
// goneAt, waiting for the server log to say when it was killed.
type pendingEnd struct {
	o      *openEpisode
	goneAt time.Time
}

// killWait is how long a vanished backend's episode waits for its kill to
// show in the server log (written by the backend before it exits, but
// through a pipe and whoever copies it to the file).
const killWait = time.Second

func newTracker(timeout time.Duration, keepQuery bool) *tracker {
	return &tracker{timeout: timeout, open: make(map[backendKey]*openEpisode), seen: make(map[backendKey]bool), keepQuery: keepQuery}
}

// queryTexts caches the fingerprints and masked texts of the last
// distinct query texts: a service runs the same few statements over and
// over, so each is lexed once. It holds at most maxQueryTexts entries
// (cleared when full), up to a few megabytes.
type queryTexts map[string]queryText

type queryText struct{ fingerprint, masked string }

const maxQueryTexts = 1024

func (c *queryTexts) get(q string) queryText {
	if t, ok := (*c)[q]; ok {
		return t
	}
	if *c == nil || len(*c) >= maxQueryTexts {
		*c = make(queryTexts)
	}
	var t queryText
	t.fingerprint, t.masked = querytext.Normalize(q, true)
	(*c)[q] = t
	return t
}

// end finishes an episode, its query text masked unless the tracker keeps
// it.
func (t *tracker) end(o *openEpisode, end time.Time, exact bool, reason string) rundir.Episode {
	qt := t.texts.get(o.base)
	ep := o.ep
	settleWaiters(o, &ep)
	ep.Fingerprint = qt.fingerprint
	if !t.keepQuery {
		ep.Query = qt.masked
	}
	return finish(ep, end, exact, reason)
}

// observe takes the rows of a sample read at now and returns the episodes
// that ended since the previous one.
func (t *tracker) observe(now time.Time, rows []backendRow) []rundir.Episode {
	var done []rundir.Episode
	seen := t.seen
	clear(seen)
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
			done = append(done, t.end(o, stateChange, true, rundir.EndReleased))
			delete(t.open, k)
		}
		if isIdleInTx(r.State) {
			seen[k] = true
			t.open[k] = &openEpisode{lastSeen: now, ep: rundir.Episode{
				PID:             r.PID,
				BackendStart:    r.BackendStart,
				Start:           stateChange,
				Aborted:         r.State == stateIdleInTxAborted,
				Query:           r.Query,
				ApplicationName: r.ApplicationName,
				ClientAddr:      r.ClientAddr,
			}}
			o := t.open[k]
			o.base = t.readComment(&o.ep)
			o.ep.SentBy = t.sent.find(r.Query)
		}
	}
	gone := len(done)
	for k, o := range t.open {
		if seen[k] {
			continue
		}
		delete(t.open, k)
		if t.kills != nil {
			t.pending = append(t.pending, pendingEnd{o, now})
			continue
		}
		done = append(done, t.vanished(o, now))
	}
	done = t.settle(done, now, false)
	sortEpisodes(done[gone:])
	return done
}

// readComment sets an episode's trace ids and comment from its query, and
// returns the text fingerprints and masks are computed from: without the
// comment, so that the statements of many requests share one.
func (t *tracker) readComment(ep *rundir.Episode) string {
	c, base, st := t.comments.Read(ep.Query)
	switch st {
	case sqlcomment.OK:
		ep.TraceID, ep.SpanID, ep.Comment = c.TraceID, c.SpanID, c.Pairs
	case sqlcomment.Malformed:
		t.malformedComments++
	}
	return base
}

// settle ends the pending episodes whose kill the server log now shows,
// and those that waited killWait (all of them with force).
func (t *tracker) settle(done []rundir.Episode, now time.Time, force bool) []rundir.Episode {
	kept := t.pending[:0]
	for _, p := range t.pending {
		// The log's %m is cut to the millisecond; the snapshot is read a
		// little after its now().
		k, ok := t.kills.Find(p.o.ep.PID, p.o.lastSeen.Add(-10*time.Millisecond), p.goneAt.Add(100*time.Millisecond))
		switch {
		case ok:
			done = append(done, t.killed(p.o, k))
		case force || now.Sub(p.goneAt) >= killWait:
			done = append(done, t.vanished(p.o, p.goneAt))
		default:
			kept = append(kept, p)
		}
	}
	clear(t.pending[len(kept):])
	t.pending = kept
	return done
}

// killed ends an episode at the kill the server logged: exact to the
// millisecond of the log's timestamp. A timeout's kill comes after
// Start + timeout; the log's millisecond may read a little before it.
func (t *tracker) killed(o *openEpisode, k serverlog.Kill) rundir.Episode {
	end := k.At
	if k.Reason == rundir.EndTimeout && t.timeout > 0 {
		if due := o.ep.Start.Add(t.timeout); end.Before(due) && due.Sub(end) < time.Millisecond {
			end = due
		}
	}
	return t.end(o, end, true, k.Reason)
}

// vanished ends an episode whose backend was in the sample at o.lastSeen
// and gone from the one at now. It went somewhere in between. A backend
// gone when idle_in_transaction_session_timeout was due was killed no
// sooner than Start + timeout (the server arms the timer as it goes idle)
// and no sooner than it was last seen: End is the later of the two, within
// the server's timer latency of the truth. Otherwise End is the middle of
// the window (lastSeen + half an interval when no sample failed).
func (t *tracker) vanished(o *openEpisode, now time.Time) rundir.Episode {
	end := o.lastSeen.Add(now.Sub(o.lastSeen) / 2)
	reason := rundir.EndTerminated
	if t.timeout > 0 {
		due := o.ep.Start.Add(t.timeout)
		if o.lastSeen.Before(due.Add(timeoutLate)) && !now.Before(due.Add(-timeoutEarly)) {
			reason = rundir.EndTimeout
			end = due
			if o.lastSeen.After(due) {
				end = o.lastSeen
			}
		}
	}
	return t.end(o, end, false, reason)
}

// tracked appends the pids of the open episodes to buf: the backends
// whose rows the next read must return whatever their state.
func (t *tracker) tracked(buf []int32) []int32 {
	buf = buf[:0]
	for k := range t.open {
		buf = append(buf, k.pid)
	}
	return buf
}

// unlinked returns the pids of open episodes at least age old at now that
// PgBouncer has not been asked about yet.
func (t *tracker) unlinked(now time.Time, age time.Duration) []int32 {
	var pids []int32
	for k, o := range t.open {
		if !o.lookedUp && now.Sub(o.ep.Start) >= age {
			pids = append(pids, k.pid)
		}
	}
	return pids
}

// link attaches PgBouncer links, by backend pid, to the open episodes of
// the pids asked for, and marks those looked up, linked or not.
func (t *tracker) link(asked []int32, links map[int32]*rundir.BouncerLink) {
	for k, o := range t.open {
		if o.lookedUp || !slices.Contains(asked, k.pid) {
			continue
		}
		o.lookedUp = true
		o.ep.PgBouncer = links[k.pid]
	}
}

// oldest describes the open episode that started first at now; nil when
// none is open.
func (t *tracker) oldest(now time.Time) *rundir.OpenEpisode {
	var o *openEpisode
	for _, x := range t.open {
		if o == nil || x.ep.Start.Before(o.ep.Start) || x.ep.Start.Equal(o.ep.Start) && x.ep.PID < o.ep.PID {
			o = x
		}
	}
	if o == nil {
		return nil
	}
	if o.fingerprint == "" {
		o.fingerprint = t.texts.get(o.base).fingerprint
	}
	return &rundir.OpenEpisode{PID: o.ep.PID, Start: o.ep.Start, AgeSeconds: max(now.Sub(o.ep.Start).Seconds(), 0),
		Fingerprint: o.fingerprint, ApplicationName: o.ep.ApplicationName}
}

// close ends the episodes still open when sampling stops, at the last
// successful sample.
func (t *tracker) close() []rundir.Episode {
	var done []rundir.Episode
	if t.kills != nil {
		done = t.settle(done, time.Time{}, true)
	}
	for k, o := range t.open {
		done = append(done, t.end(o, o.lastSeen, false, rundir.EndOpenAtEnd))
		delete(t.open, k)
	}
	sortEpisodes(done)
	return done
}

// sortEpisodes orders episodes found in map order, so that output is
// deterministic.
func sortEpisodes(eps []rundir.Episode) {
	slices.SortFunc(eps, func(a, b rundir.Episode) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.PID, b.PID))
	})
}

func finish(ep rundir.Episode, end time.Time, exact bool, reason string) rundir.Episode {
	if end.Before(ep.Start) {
		end = ep.Start
	}
	ep.End = end
	ep.HoldSeconds = end.Sub(ep.Start).Seconds()
	ep.EndExact = exact
	ep.EndReason = reason
	return ep
}
