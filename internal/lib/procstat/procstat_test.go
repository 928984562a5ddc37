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
	for end := time.Now().Add(150 * time.Millisecond); time.Now().Before(end); {
	}
	s1, p1 := Self(), Of(os.Getpid())
	if s1-s0 < 100*time.Millisecond || p1-p0 < 50*time.Millisecond {
		t.Errorf("150 ms of spinning: getrusage %s, /proc %s", s1-s0, p1-p0)
	}
	if Of(1<<30) != 0 {
		t.Error("an absent pid has CPU time")
	}
}
