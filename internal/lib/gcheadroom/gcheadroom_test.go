package gcheadroom

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	p := Policy{Headroom: 32 << 20, MinPercent: 10, MaxPercent: 100}
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},             // nothing measured yet: GOGC's default
		{4 << 20, 100},       // a small heap keeps GOGC=100
		{32 << 20, 100},      // headroom equal to the live heap
		{64 << 20, 50},       // twice the headroom
		{128 << 20, 25},      //
		{320 << 20, 10},      // ten times
		{4096 << 20, 10},     // bounded: the collector's work stays bounded
		{(32 << 20) * 3, 33}, // rounded down: never more headroom than asked
	} {
		if got := p.Percent(c.live); got != c.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// currentPercent reads the collector's percentage (setting it back).
func currentPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

// TestRunFollowsTheLiveHeap holds a live heap eight times the headroom and
// checks that Run lowers GOGC to match, then restores it when it stops.
func TestRunFollowsTheLiveHeap(t *testing.T) {
	// Run stands aside when GOGC is set: this test plays it unset.
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if before := currentPercent(); before != 100 {
		t.Skipf("GOGC is %d in this test process, not the default this test starts from", before)
	}
	p := Policy{Headroom: 4 << 20, MinPercent: 5, MaxPercent: 100, Every: 10 * time.Millisecond}
	ballast := make([][]byte, 32) // 32 MiB live: eight times the headroom
	for i := range ballast {
		ballast[i] = make([]byte, 1<<20)
	}
	runtime.GC() // so that the live heap metric counts them
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, p); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for currentPercent() > 13 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := currentPercent()
	cancel()
	<-done
	runtime.KeepAlive(ballast)
	// 4 MiB over ≥ 32 MiB live (plus the test's own heap): at most 12%.
	if got > 12 || got < 5 {
		t.Errorf("with 32 MiB live and 4 MiB of headroom GOGC is %d, want 5–12", got)
	}
	if after := currentPercent(); after != 100 {
		t.Errorf("after Run stopped GOGC is %d, want the 100 it found", after)
	}
}

// TestRunLeavesTheUsersGOGC checks that a GOGC the user set stands.
func TestRunLeavesTheUsersGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	p := Policy{Headroom: 1, MinPercent: 1, MaxPercent: 100, Every: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	Run(ctx, p) // returns at once: the loop below never ran
	if ctx.Err() != nil {
		t.Fatal("Run played its policy although GOGC was set")
	}
	if got := currentPercent(); got != 100 {
		t.Errorf("GOGC is %d, want the user's 100", got)
	}
}
