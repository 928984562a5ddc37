package probes

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestServerLog: kills are read from what the server appends after the log
// is opened, a line split across polls included; other lines, and kills
// logged before, are not.
func TestServerLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "postgres.log")
	appendLog := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	appendLog("2026-01-03 11:59:00.000 UTC [4242] FATAL:  terminating connection due to idle-in-transaction timeout\n")
	l, err := openServerLog(path, "Etc/UTC")
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	appendLog("2026-01-03 12:00:00.100 UTC [4000] LOG:  database system is ready to accept connections\n" +
		"2026-01-03 12:00:05.123 UTC [4242] FATAL:  terminating connection due to idle-in-transaction timeout\n" +
		"2026-01-03 12:00:06.5 UTC [4243] FATAL:  terminating connection due to admin")
	if err := l.poll(); err != nil {
		t.Fatal(err)
	}
	appendLog("istrator command\n2026-01-03 12:00:07.000 UTC [4244] FATAL:  terminating connection due to unexpected postmaster exit\n")
	if err := l.poll(); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 3, 12, 0, 0, 0, time.UTC)
	if _, ok := l.find(4242, base.Add(-2*time.Minute), base); ok {
		t.Error("a kill logged before the log was opened was read")
	}
	k, ok := l.find(4242, base, base.Add(10*time.Second))
	if !ok || k.reason != rundir.EndTimeout || !k.at.Equal(base.Add(5123*time.Millisecond)) {
		t.Errorf("4242: %+v %v; want a timeout at 12:00:05.123", k, ok)
	}
	if _, ok := l.find(4242, base, base.Add(10*time.Second)); ok {
		t.Error("4242 found twice")
	}
	if k, ok := l.find(4243, base.Add(6*time.Second), base.Add(7*time.Second)); !ok || k.reason != rundir.EndTerminated || !k.at.Equal(base.Add(6500*time.Millisecond)) {
		t.Errorf("4243 (a line split across polls): %+v %v; want terminated at 12:00:06.5", k, ok)
	}
	if _, ok := l.find(4244, base, base.Add(10*time.Second)); ok {
		t.Error("4244: a FATAL that is no kill the probe knows was read as one")
	}
	// A log cut back (rotated by copy and truncate) is read from its start.
	if err := os.WriteFile(path, []byte("2026-01-03 12:01:00.000 UTC [77] FATAL:  terminating connection due to administrator command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.poll(); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.find(77, base, base.Add(2*time.Minute)); !ok {
		t.Error("a kill after the log was truncated was missed")
	}
	if checkLogPrefix("%m [%p] ") != nil || checkLogPrefix("%m [%p] %q%u@%d ") != nil || checkLogPrefix("%t [%p]: ") == nil {
		t.Errorf("checkLogPrefix: want %q at the start, and only that", logPrefix)
	}
}

// fakeKills is a killFinder over a fixed list.
type fakeKills map[int32]logKill

func (f fakeKills) find(pid int32, from, to time.Time) (logKill, bool) {
	k, ok := f[pid]
	if !ok || k.at.Before(from) || k.at.After(to) {
		return logKill{}, false
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
		1: {at: at(1.0204), reason: rundir.EndTimeout}, // a timeout, 0.4 ms late
		2: {at: at(0.3), reason: rundir.EndTerminated}, // pg_terminate_backend
		3: {at: at(1.0195), reason: rundir.EndTimeout}, // logged 0.5 ms "before" due
		5: {at: at(0.32), reason: rundir.EndTimeout},   // its session's own, shorter timeout
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
	tr.kills = fakeKills{3: {at: at(1.0195), reason: rundir.EndTimeout}}
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
