package serverlog

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
	l, err := Open(path, "Etc/UTC")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendLog("2026-01-03 12:00:00.100 UTC [4000] LOG:  database system is ready to accept connections\n" +
		"2026-01-03 12:00:05.123 UTC [4242] FATAL:  terminating connection due to idle-in-transaction timeout\n" +
		"2026-01-03 12:00:06.5 UTC [4243] FATAL:  terminating connection due to admin")
	if err := l.Poll(); err != nil {
		t.Fatal(err)
	}
	appendLog("istrator command\n2026-01-03 12:00:07.000 UTC [4244] FATAL:  terminating connection due to unexpected postmaster exit\n")
	if err := l.Poll(); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 3, 12, 0, 0, 0, time.UTC)
	if _, ok := l.Find(4242, base.Add(-2*time.Minute), base); ok {
		t.Error("a kill logged before the log was opened was read")
	}
	k, ok := l.Find(4242, base, base.Add(10*time.Second))
	if !ok || k.Reason != rundir.EndTimeout || !k.At.Equal(base.Add(5123*time.Millisecond)) {
		t.Errorf("4242: %+v %v; want a timeout at 12:00:05.123", k, ok)
	}
	if _, ok := l.Find(4242, base, base.Add(10*time.Second)); ok {
		t.Error("4242 found twice")
	}
	if k, ok := l.Find(4243, base.Add(6*time.Second), base.Add(7*time.Second)); !ok || k.Reason != rundir.EndTerminated || !k.At.Equal(base.Add(6500*time.Millisecond)) {
		t.Errorf("4243 (a line split across polls): %+v %v; want terminated at 12:00:06.5", k, ok)
	}
	if _, ok := l.Find(4244, base, base.Add(10*time.Second)); ok {
		t.Error("4244: a FATAL that is no kill the probe knows was read as one")
	}
	// A log cut back (rotated by copy and truncate) is read from its start.
	if err := os.WriteFile(path, []byte("2026-01-03 12:01:00.000 UTC [77] FATAL:  terminating connection due to administrator command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.Poll(); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Find(77, base, base.Add(2*time.Minute)); !ok {
		t.Error("a kill after the log was truncated was missed")
	}
	if CheckPrefix("%m [%p] ") != nil || CheckPrefix("%m [%p] %q%u@%d ") != nil || CheckPrefix("%t [%p]: ") == nil {
		t.Errorf("CheckPrefix: want %q at the start, and only that", logPrefix)
	}
}
