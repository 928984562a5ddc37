package procstat

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// TestParseStat: the aggregate line is summed without guest time (inside
// user already); idle and iowait are not busy; a file without the
// aggregate line, or whose numbers do not parse, is refused. The files
// are fake /proc trees read through procfs, as Machine reads the real one.
func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in        string
		busy, tot float64 // seconds: USER_HZ is 100
		ok        bool
	}{
		{"cpu  100 2 30 500 8 1 4 5 7 0\ncpu0 1 2 3 4\n", 1.42, 6.50, true},
		{"cpu 10 0 10 80\n", 0.20, 1.00, true}, // an old kernel: four fields
		{"cpu0 10 0 10 80\n", 0, 0, false},
		{"cpu 10 x 10 80\n", 0, 0, false},
		{"", 0, 0, false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		fs, err := procfs.NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := machine(fs)
		if ok != tc.ok || math.Abs(got.Busy-tc.busy) > 1e-9 || math.Abs(got.Total-tc.tot) > 1e-9 {
			t.Errorf("%q: %+v %v, want busy %g total %g %v", tc.in, got, ok, tc.busy, tc.tot, tc.ok)
		}
	}
	if _, ok := machine(procfs.FS{}); ok {
		t.Error("no stat file read as a machine")
	}
	if s := BusyShare(CPUTimes{Busy: 10, Total: 100}, CPUTimes{Busy: 60, Total: 200}); s != 0.5 {
		t.Errorf("busy share %v, want 0.5", s)
	}
	if s := BusyShare(CPUTimes{Busy: 10, Total: 100}, CPUTimes{Busy: 10, Total: 100}); s != 0 {
		t.Errorf("no tick: busy share %v, want 0", s)
	}
}

// TestMachineReal reads the real /proc/stat: spinning every CPU for a
// while makes the machine's busy share high, whatever else runs.
func TestMachineReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/stat is Linux's")
	}
	a, ok := Machine()
	if !ok || a.Total == 0 || a.Busy > a.Total {
		t.Fatalf("/proc/stat: %+v %v", a, ok)
	}
	// Spin on every CPU for 300 ms of wall time (bounded: a fixed span).
	stop := time.Now().Add(300 * time.Millisecond)
	done := make(chan struct{})
	n := runtime.NumCPU()
	for range n {
		go func() {
			for time.Now().Before(stop) {
			}
			done <- struct{}{}
		}()
	}
	for range n {
		<-done
	}
	b, ok := Machine()
	if !ok {
		t.Fatal("second read failed")
	}
	// Every CPU spun; a cgroup limit or another tenant may take a share,
	// but idle and busy swapped would read near 0.
	if s := BusyShare(a, b); s < 0.4 || s > 1 {
		t.Errorf("busy share %.2f while every CPU spun", s)
	}
}
