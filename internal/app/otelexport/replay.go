package otelexport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
)

// A run whose requests did not pass through this process's engine — a
// sharded run, its load played by leakbench containers and merged here —
// has them only in its requests.jsonl. replayRequests exports them from
// there after the run, span for span as the engine's sink would have (the
// same ids, times and attributes), so that a sharded run's traces hold
// their requests as a one-process run's do.

// markLive records that run's requests reach the exporter as they end.
func (x *Exporter) markLive(run string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.live == nil {
		x.live = map[string]bool{}
	}
	x.live[run] = true
}

func (x *Exporter) isLive(run string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.live[run]
}

// replayRequests ends a span for each request of dir's requests.jsonl,
// sampled as live requests are, flushing every half queue so that the
// replay does not outrun the exporter and drop what a live run would have
// sent. After a failed flush (a collector down) it goes on without
// waiting: the rest are dropped by the full queue and counted as such.
// A run without requests.jsonl (a probe alone) has nothing to replay.
func (x *Exporter) replayRequests(ctx context.Context, dir, run string) error {
	f, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("replay the requests as spans: %w", err)
	}
	defer f.Close()
	sink := x.Spans(run).(*requestSpans)
	chunk := max(1, x.cfg.MaxQueue/2)
	n := 0
	var flushErr error
	var r reqindex.Request
	_, err = jsonl.Each(f, -1, func(l *rundir.Request) {
		tid, ok := traceID(l.TraceID)
		if !ok {
			return // no trace id: not a request the engine sent
		}
		sid, _ := spanID(l.SpanID) // absent in runs from before: a span id of its own
		r = reqindex.Request{Trace: tid, Span: sid, User: l.User, Iteration: l.Iteration, Step: l.Step, Method: l.Method, Name: l.Name,
			Start: l.Start, Took: secondsDuration(l.Seconds), Outcome: l.Outcome, Kind: l.Kind}
		sink.RequestEnded(&r, l.Scenario)
		if n++; n%chunk == 0 && flushErr == nil {
			flushErr = x.flush(ctx)
		}
	})
	if err != nil {
		return fmt.Errorf("replay the requests as spans: read %s: %w", rundir.RequestsFile, err)
	}
	return nil
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
