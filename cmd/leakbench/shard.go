package main

import (
	"fmt"
	"time"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// maxStartAhead bounds --start-at: a shard never waits longer than this.
const maxStartAhead = 24 * time.Hour

// shardFlags reads run's --shard i/N and --start-at TIME.
func shardFlags(shard, startAt string, now time.Time) (plan.Segment, time.Time, error) {
	var seg plan.Segment
	if shard != "" {
		s, err := plan.ParseSegment(shard)
		if err != nil {
			return seg, time.Time{}, fmt.Errorf("%w: --shard: %w", cliflag.ErrUsage, err)
		}
		seg = s
	}
	if startAt == "" {
		return seg, time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339, startAt)
	if err != nil {
		return seg, time.Time{}, fmt.Errorf("%w: --start-at %q: want an RFC 3339 time, e.g. %s", cliflag.ErrUsage, startAt, now.Add(time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	if at.Sub(now) > maxStartAhead {
		return seg, time.Time{}, fmt.Errorf("%w: --start-at %s is more than %s ahead", cliflag.ErrUsage, startAt, maxStartAhead)
	}
	// A time already past (clocks a few seconds apart, a pod scheduled
	// late) starts at once; the merge reports shards that started late.
	return seg, at, nil
}
