package main

import (
	"fmt"
	"time"

	"github.com/leakbench/leakbench/internal/app/runner"
)

// maxStartAhead bounds --start-at: a shard never waits longer than this.
const maxStartAhead = 24 * time.Hour

// shardFlags reads run's --shard i/N and --start-at TIME.
func shardFlags(shard, startAt string, now time.Time) (runner.Segment, time.Time, error) {
	var seg runner.Segment
	if shard != "" {
		s, err := runner.ParseSegment(shard)
		if err != nil {
			return seg, time.Time{}, fmt.Errorf("%w: --shard: %v", errUsage, err)
		}
		seg = s
	}
	if startAt == "" {
		return seg, time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339, startAt)
	if err != nil {
		return seg, time.Time{}, fmt.Errorf("%w: --start-at %q: want an RFC 3339 time, e.g. %s", errUsage, startAt, now.Add(time.Minute).UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	if at.Sub(now) > maxStartAhead {
		return seg, time.Time{}, fmt.Errorf("%w: --start-at %s is more than %s ahead", errUsage, startAt, maxStartAhead)
	}
	// A time already past (clocks a few seconds apart, a pod scheduled
	// late) starts at once; the merge reports shards that started late.
	return seg, at, nil
}
