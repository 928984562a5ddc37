// Package gcheadroom bounds how far the heap may grow between garbage
// collections to a fixed number of bytes, where Go's default (GOGC=100)
// lets it grow by as much again as the live heap.
//
// Why: a load generator's live heap grows with its users. 100,000 users
// that mostly wait hold about 4–7 KB of live heap each, and GOGC=100 lets
// their garbage reach as much again before a collection (the moonshot
// benchmark's workers held 20.9 KB of resident memory per user; 12.9 KB
// with this policy, for 13% more CPU per request). The collector's CPU per second is proportional to the
// allocation rate over the headroom, not to the live heap: a large heap
// of waiting users allocates slowly, so a fixed headroom costs little CPU
// there, while a small heap of busy users keeps GOGC's 100% (the headroom
// is larger than its live heap) and its CPU stays as it was. The runtime
// offers a proportion (GOGC) or a ceiling (GOMEMLIMIT), not a headroom;
// this package turns one into the other once a second, by hand because no
// library does.
package gcheadroom

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Policy is the headroom and the bounds of the GOGC percentage that gives
// it.
type Policy struct {
	// Headroom is how many bytes the heap may grow past the live heap
	// before the next collection.
	Headroom uint64
	// MinPercent bounds the collector's work when the live heap is huge
	// against the headroom; MaxPercent is GOGC's own default, kept for a
	// small heap.
	MinPercent, MaxPercent int
	// Every is how often the live heap is read and the percentage set.
	Every time.Duration
}

// Default is the policy leakbench's worker processes play with: 16 MiB of
// headroom each, GOGC between 10 and 100.
func Default() Policy {
	return Policy{Headroom: 16 << 20, MinPercent: 10, MaxPercent: 100, Every: time.Second}
}

// Percent is the GOGC percentage that lets a live heap of live bytes grow
// by the policy's headroom, within its bounds.
func (p Policy) Percent(live uint64) int {
	if live == 0 {
		return p.MaxPercent
	}
	pct := p.Headroom * 100 / live
	return int(min(max(pct, uint64(p.MinPercent)), uint64(p.MaxPercent)))
}

// liveHeap is the runtime's metric of the heap the last collection found
// reachable (Go 1.21+).
const liveHeap = "/gc/heap/live:bytes"

// Run sets the collector's percentage from the live heap every p.Every
// until ctx ends, then puts back the percentage it found. It does nothing
// when the process was started with GOGC set: the user's choice stands.
func Run(ctx context.Context, p Policy) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	sample := []metrics.Sample{{Name: liveHeap}}
	// SetGCPercent returns the previous value; reading it means setting
	// it, so the first set is the policy's own.
	current := p.MaxPercent
	previous := debug.SetGCPercent(current)
	defer debug.SetGCPercent(previous)
	t := time.NewTicker(p.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // a runtime without the metric: GOGC as it was
		}
		next := p.Percent(sample[0].Value.Uint64())
		// Setting the percentage stops the world for a moment: only
		// when it moves by more than a tenth.
		if diff := next - current; diff*10 > current || -diff*10 > current {
			debug.SetGCPercent(next)
			current = next
		}
	}
}
