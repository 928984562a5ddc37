package procstat

import (
	"os"
	"testing"
	"time"
)

// TestCPU: burning CPU shows in this process's own count and in its
// /proc/self/stat count alike; an absent pid reads 0.
func TestCPU(t *testing.T) {
	s0, p0 := Self(), Of(os.Getpid())
	// Spin until this process has used 150 ms of CPU, not 150 ms of wall
	// time: on a loaded machine the spinning thread may get only part of
	// a core. The wall-time bound only keeps a broken Self from hanging.
	for deadline := time.Now().Add(20 * time.Second); Self()-s0 < 150*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("20 s of spinning counted %s of CPU by getrusage", Self()-s0)
		}
	}
	s1, p1 := Self(), Of(os.Getpid())
	// /proc counts in clock ticks (10 ms): it must agree within a few.
	if d := (s1 - s0) - (p1 - p0); d > 50*time.Millisecond || d < -50*time.Millisecond {
		t.Errorf("150 ms of CPU: getrusage %s, /proc %s", s1-s0, p1-p0)
	}
	if Of(1<<30) != 0 {
		t.Error("an absent pid has CPU time")
	}
}
