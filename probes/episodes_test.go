package probes

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/serverlog"
)

var t0 = time.Date(2026, 1, 3, 12, 0, 0, 0, time.UTC)

// at is t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// row is backend pid (started at t0 + born seconds) in state since sc.
func row(pid int32, born float64, state string, sc float64) backendRow {
	return backendRow{PID: pid, BackendStart: at(born), State: state, StateChange: at(sc),
		Query: fmt.Sprintf("SELECT %d", pid), ApplicationName: "app"}
}

// obs is one successful sample at t0 + at seconds.
type obs struct {
	at   float64
	rows []backendRow
}

// ep is the part of an Episode a case checks, times in seconds after t0.
type ep struct {
	pid        int32
	start, end float64
	exact      bool
	reason     string
	aborted    bool
}

func TestTracker(t *testing.T) {
	const iit, aborted = stateIdleInTx, stateIdleInTxAborted
	cases := []struct {
		name    string
		timeout time.Duration
		samples []obs
		want    []ep
	}{
		{
			name: "released exactly",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.05)}},
				{0.2, []backendRow{row(1, 0, iit, 0.05)}},
				{0.3, []backendRow{row(1, 0, stateIdle, 0.25)}},
			},
			want: []ep{{1, 0.05, 0.25, true, rundir.EndReleased, false}},
		},
		{
			name: "seen active: the wait ended when the next statement began",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.05)}},
				{0.2, []backendRow{row(1, 0, stateActive, 0.12)}},
			},
			want: []ep{{1, 0.05, 0.12, true, rundir.EndReleased, false}},
		},
		{
			name: "idle in transaction again in the same transaction: two episodes",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.05)}},
				{0.2, []backendRow{row(1, 0, iit, 0.15)}},
				{0.3, []backendRow{row(1, 0, stateIdle, 0.28)}},
			},
			want: []ep{{1, 0.05, 0.15, true, rundir.EndReleased, false}, {1, 0.15, 0.28, true, rundir.EndReleased, false}},
		},
		{
			name:    "vanished at the timeout",
			timeout: time.Second,
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.02)}},
				{0.5, []backendRow{row(1, 0, iit, 0.02)}},
				{1.0, []backendRow{row(1, 0, iit, 0.02)}},
				{1.1, nil},
			},
			// Killed no sooner than Start + timeout: the end is that, not
			// the middle of the window (1.05).
			want: []ep{{1, 0.02, 1.02, false, rundir.EndTimeout, false}},
		},
		{
			name:    "vanished a little late for the timeout (busy server)",
			timeout: time.Second,
			samples: []obs{
				{1.4, []backendRow{row(1, 0, iit, 0)}},
				{1.5, nil},
			},
			// Seen after the timeout was due: killed after that sighting.
			want: []ep{{1, 0, 1.4, false, rundir.EndTimeout, false}},
		},
		{
			name:    "vanished too late for the timeout",
			timeout: time.Second,
			samples: []obs{
				{1.6, []backendRow{row(1, 0, iit, 0)}},
				{1.7, nil},
			},
			want: []ep{{1, 0, 1.65, false, rundir.EndTerminated, false}},
		},
		{
			name:    "vanished early: terminated",
			timeout: time.Second,
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.05)}},
				{0.4, []backendRow{row(1, 0, iit, 0.05)}},
				{0.5, nil},
			},
			want: []ep{{1, 0.05, 0.45, false, rundir.EndTerminated, false}},
		},
		{
			name:    "vanished just before the timeout was due: terminated",
			timeout: time.Second,
			samples: []obs{
				{0.8, []backendRow{row(1, 0, iit, 0)}},
				{0.9, nil},
			},
			want: []ep{{1, 0, 0.85, false, rundir.EndTerminated, false}},
		},
		{
			name: "no timeout configured: terminated",
			samples: []obs{
				{1.0, []backendRow{row(1, 0, iit, 0)}},
				{1.1, nil},
			},
			want: []ep{{1, 0, 1.05, false, rundir.EndTerminated, false}},
		},
		{
			name: "a failed sample widens the window: End is its middle",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.05)}},
				// the sample at 0.2 failed: no rows
				{0.3, nil},
			},
			want: []ep{{1, 0.05, 0.2, false, rundir.EndTerminated, false}},
		},
		{
			name: "pid reused by a new backend",
			samples: []obs{
				{0.1, []backendRow{row(7, 0, iit, 0.05)}},
				{0.2, []backendRow{row(7, 0.12, iit, 0.15)}},
				{0.3, []backendRow{row(7, 0.12, stateIdle, 0.25)}},
			},
			want: []ep{{7, 0.05, 0.15, false, rundir.EndTerminated, false}, {7, 0.15, 0.25, true, rundir.EndReleased, false}},
		},
		{
			name: "aborted",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, aborted, 0.05)}},
				{0.2, []backendRow{row(1, 0, stateIdle, 0.18)}},
			},
			want: []ep{{1, 0.05, 0.18, true, rundir.EndReleased, true}},
		},
		{
			name: "failed statement: idle in transaction, then aborted",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, iit, 0.05)}},
				{0.2, []backendRow{row(1, 0, aborted, 0.15)}},
				{0.3, []backendRow{row(1, 0, stateIdle, 0.25)}},
			},
			want: []ep{{1, 0.05, 0.15, true, rundir.EndReleased, false}, {1, 0.15, 0.25, true, rundir.EndReleased, true}},
		},
		{
			name: "open when sampling stops",
			samples: []obs{
				{0.1, []backendRow{row(2, 0, iit, 0.05), row(1, 0, iit, 0.01)}},
				{0.2, []backendRow{row(2, 0, iit, 0.05), row(1, 0, iit, 0.01)}},
			},
			want: []ep{{1, 0.01, 0.2, false, rundir.EndOpenAtEnd, false}, {2, 0.05, 0.2, false, rundir.EndOpenAtEnd, false}},
		},
		{
			name: "busy and idle backends make no episodes",
			samples: []obs{
				{0.1, []backendRow{row(1, 0, stateActive, 0.05), row(2, 0, stateIdle, 0.01)}},
				{0.2, []backendRow{row(1, 0, stateIdle, 0.15)}},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTracker(c.timeout, false)
			var got []rundir.Episode
			for _, s := range c.samples {
				got = append(got, tr.observe(at(s.at), s.rows)...)
			}
			got = append(got, tr.close()...)
			if len(got) != len(c.want) {
				t.Fatalf("got %d episodes, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				g := got[i]
				gotEp := ep{g.PID, sec(g.Start), sec(g.End), g.EndExact, g.EndReason, g.Aborted}
				if gotEp != w {
					t.Errorf("episode %d: got %+v, want %+v", i, gotEp, w)
				}
				if d := g.HoldSeconds - (w.end - w.start); d > 1e-9 || d < -1e-9 {
					t.Errorf("episode %d: hold %.6f, want %.6f", i, g.HoldSeconds, w.end-w.start)
				}
				if g.Query != "SELECT ?" || g.Fingerprint != "SELECT ?" || g.ApplicationName != "app" {
					t.Errorf("episode %d: query %q fingerprint %q application %q; want the masked query", i, g.Query, g.Fingerprint, g.ApplicationName)
				}
			}
		})
	}
}

// sec is t in seconds after t0, rounded to the millisecond.
func sec(t time.Time) float64 {
	return float64(t.Sub(t0).Round(time.Millisecond)) / float64(time.Second)
}

func TestMeasure(t *testing.T) {
	rows := []backendRow{
		row(1, 0, stateIdleInTx, 1.0),
		row(2, 0, stateIdleInTxAborted, 2.5),
		row(3, 0, stateActive, 2.9),
		row(5, 0, "fastpath function call", 2.9),
	}
	want := rundir.StateCounts{Active: 1, Idle: 1, IdleInTx: 1, IdleInTxAborted: 1, Other: 1}
	var s rundir.Sample
	measure(&s, activity{now: at(3), states: want, oldestXact: at(0.5), rows: rows}, time.Second)
	if s.States != want || s.StuckIdleInTx != 1 || s.OldestIdleInTxSeconds != 2 || s.OldestXactSeconds != 2.5 || !s.Time.Equal(at(3)) {
		t.Errorf("got %+v, want states %+v, 1 stuck, oldest idle in tx 2 s, oldest xact 2.5 s", s, want)
	}
	// No open transaction: no age.
	s = rundir.Sample{}
	measure(&s, activity{now: at(3)}, time.Second)
	if s.OldestXactSeconds != 0 || s.OldestIdleInTxSeconds != 0 || s.StuckIdleInTx != 0 {
		t.Errorf("nothing open: got %+v, want zero ages", s)
	}
}

// TestTrackerLinks: an episode is looked up in PgBouncer once it is old
// enough; found or not, it is not asked for again, and a read that failed
// (no link call) leaves it to the next one.
func TestTrackerLinks(t *testing.T) {
	tr := newTracker(0, true)
	tr.observe(at(0.1), []backendRow{row(1, 0, stateIdleInTx, 0.05), row(2, 0, stateIdleInTx, 0.05), row(3, 0, stateIdleInTx, 0.09)})
	if got := tr.unlinked(at(0.1), 40*time.Millisecond); len(got) != 2 || !slices.Contains(got, 1) || !slices.Contains(got, 2) {
		t.Fatalf("unlinked %v, want 1 and 2 (3 is too young)", got)
	}
	// The read failed: no link call; asked again.
	if got := tr.unlinked(at(0.1), 40*time.Millisecond); len(got) != 2 {
		t.Fatalf("after a failed read: unlinked %v, want 1 and 2 again", got)
	}
	l := &rundir.BouncerLink{User: "app", ServerLocalPort: 4000}
	tr.link([]int32{1, 2}, map[int32]*rundir.BouncerLink{1: l})
	if got := tr.unlinked(at(0.2), 40*time.Millisecond); !slices.Equal(got, []int32{3}) {
		t.Errorf("after the lookup: unlinked %v, want only 3 (2 is not behind PgBouncer)", got)
	}
	eps := tr.observe(at(0.3), nil)
	if len(eps) != 3 || eps[0].PgBouncer != l || eps[1].PgBouncer != nil || eps[2].PgBouncer != nil {
		t.Errorf("episodes %+v: want 1 linked, 2 and 3 not", eps)
	}
}

// TestTrackerQueryText: episodes carry their query masked, or raw with
// keepQuery; the fingerprint either way.
func TestTrackerQueryText(t *testing.T) {
	const raw = "SELECT 'sk_live_SECRET123', 'alice@example.com' /* \x1b[31m */"
	for _, keep := range []bool{false, true} {
		tr := newTracker(0, keep)
		r := row(1, 0, stateIdleInTx, 0.05)
		r.Query = raw
		tr.observe(at(0.1), []backendRow{r})
		if o := tr.oldest(at(0.1)); o == nil || o.Fingerprint != "SELECT ?, ?" {
			t.Errorf("keep %v: oldest %+v, want fingerprint %q", keep, o, "SELECT ?, ?")
		}
		eps := tr.close()
		want := "SELECT ?, ?"
		if keep {
			want = raw
		}
		if len(eps) != 1 || eps[0].Query != want || eps[0].Fingerprint != "SELECT ?, ?" {
			t.Errorf("keep %v: episodes %+v, want query %q, fingerprint %q", keep, eps, want, "SELECT ?, ?")
		}
	}
}

// fakeKills is a killFinder over a fixed list.
type fakeKills map[int32]serverlog.Kill

func (f fakeKills) Find(pid int32, from, to time.Time) (serverlog.Kill, bool) {
	k, ok := f[pid]
	if !ok || k.At.Before(from) || k.At.After(to) {
		return serverlog.Kill{}, false
	}
	delete(f, pid)
	return k, true
}

// TestTrackerKills: with a server log, a vanished backend's episode ends
// at its logged kill, exactly; without a line within killWait, as an
// estimate; a timeout's kill logged within a millisecond before it was
// due (the log's %m is cut to the millisecond) ends when it was due.
func TestTrackerKills(t *testing.T) {
	kills := fakeKills{
		1: {At: at(1.0204), Reason: rundir.EndTimeout}, // a timeout, 0.4 ms late
		2: {At: at(0.3), Reason: rundir.EndTerminated}, // pg_terminate_backend
		3: {At: at(1.0195), Reason: rundir.EndTimeout}, // logged 0.5 ms "before" due
		5: {At: at(0.32), Reason: rundir.EndTimeout},   // its session's own, shorter timeout
	}
	tr := newTracker(time.Second, false)
	tr.kills = kills
	rows := []backendRow{row(1, 0, stateIdleInTx, 0.02), row(2, 0, stateIdleInTx, 0.02), row(3, 0, stateIdleInTx, 0.02),
		row(4, 0, stateIdleInTx, 0.02), row(5, 0, stateIdleInTx, 0.02)}
	var got []rundir.Episode
	got = append(got, tr.observe(at(0.1), rows)...)
	got = append(got, tr.observe(at(0.2), rows)...)
	got = append(got, tr.observe(at(0.35), rows[:1])...) // 2, 3, 4, 5 vanish; 2 and 5 are in the log
	if len(got) != 2 || got[0].PID != 2 || !got[0].EndExact || got[0].EndReason != rundir.EndTerminated || !got[0].End.Equal(at(0.3)) ||
		got[1].PID != 5 || !got[1].EndExact || got[1].EndReason != rundir.EndTimeout {
		t.Fatalf("after 0.35: %+v; want 2 terminated at 0.3 and 5 timed out at 0.32, exact", got)
	}
	got = tr.observe(at(1.0), rows[:1]) // 3 and 4 still waiting for their line
	if len(got) != 0 || len(tr.pending) != 2 {
		t.Fatalf("after 1.0: %+v, %d pending; want none yet, 2 pending", got, len(tr.pending))
	}
	got = tr.observe(at(1.4), nil)
	// 1: in the log. 3: gone at 0.35, waited killWait: an estimate,
	// terminated (the timeout was not due). 4: the same.
	if len(got) != 3 {
		t.Fatalf("after 1.4: %+v; want 3 episodes", got)
	}
	for _, e := range got {
		switch e.PID {
		case 1:
			if !e.EndExact || e.EndReason != rundir.EndTimeout || !e.End.Equal(at(1.0204)) {
				t.Errorf("1: %+v, want a timeout ending exactly at 1.0204", e)
			}
		case 3, 4:
			if e.EndExact || e.EndReason != rundir.EndTerminated {
				t.Errorf("%d: %+v, want an estimated termination", e.PID, e)
			}
		default:
			t.Errorf("unexpected %+v", e)
		}
	}
	// Logged a hair before due: ends when due.
	tr = newTracker(time.Second, false)
	tr.kills = fakeKills{3: {At: at(1.0195), Reason: rundir.EndTimeout}}
	tr.observe(at(1.0), rows[2:3])
	if got := tr.observe(at(1.1), nil); len(got) != 1 || !got[0].EndExact || got[0].HoldSeconds < 1 || got[0].HoldSeconds > 1.0000001 {
		t.Errorf("logged 0.5 ms before due: %+v; want exact, held the timeout", got)
	}
	// Stop settles what waits.
	tr = newTracker(time.Second, false)
	tr.kills = fakeKills{}
	tr.observe(at(1.0), rows[:1])
	tr.observe(at(1.1), nil)
	if got := tr.close(); len(got) != 1 || got[0].EndExact || got[0].EndReason != rundir.EndTimeout || got[0].HoldSeconds < 1 {
		t.Errorf("close: %+v; want the pending timeout, estimated, held ≥ 1 s", got)
	}
}
