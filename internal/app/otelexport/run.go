package otelexport

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// RunWritten exports the run whose directory dir is written — its
// episodes as spans, its key figures as gauges, and its requests from
// requests.jsonl when they did not pass through Spans as they ended (a
// sharded run's, played in containers: replay.go) — waits (at most
// FlushTimeout each) for the run's spans to be delivered, and records in
// sum.OTLP what was: the caller writes sum again. dbAddr is the host:port
// of the PostgreSQL the probe watched ("" unknown). A line on log says
// what was sent and, when spans were dropped, how many and why. Export
// failures are reported, never returned: the run's result stands.
func (x *Exporter) RunWritten(ctx context.Context, dir string, sum *rundir.Summary, dbAddr string, log io.Writer) {
	if x == nil || sum == nil {
		return
	}
	if log == nil {
		log = io.Discard
	}
	var errs []string // what went wrong, spans first
	var flushErr error
	if x.tp != nil {
		if x.cfg.SampleRatio > 0 && !x.isLive(sum.Name) {
			if err := x.replayRequests(ctx, dir, sum.Name); err != nil {
				errs = append(errs, redact.String(err.Error()))
			}
		}
		if err := x.exportEpisodes(ctx, dir, sum, dbAddr); err != nil {
			errs = append(errs, redact.String(err.Error()))
		}
		flushErr = x.flush(ctx)
	}
	rec := &rundir.OTLPExport{Endpoint: x.endpoint, SampleRatio: x.cfg.SampleRatio}
	var metricsErr error
	if x.metrics != nil {
		metricsErr = x.metrics.record(ctx, sum, x.cfg.FlushTimeout)
		rec.MetricsExported = metricsErr == nil
	}
	x.mu.Lock()
	now := x.counts()
	d := counts{requests: now.requests - x.last.requests, episodes: now.episodes - x.last.episodes,
		exported: now.exported - x.last.exported, failed: now.failed - x.last.failed}
	x.last = now
	x.mu.Unlock()
	rec.RequestSpans, rec.EpisodeSpans, rec.SpansExported = d.requests, d.episodes, d.exported
	rec.SpansDropped = max(0, d.requests+d.episodes-d.exported)
	var lastErr *string
	if x.counted != nil {
		lastErr = x.counted.lastErr.Swap(nil) // this run's
	}
	if rec.SpansDropped > 0 && len(errs) == 0 {
		switch {
		case lastErr != nil:
			errs = append(errs, *lastErr) // why the collector did not take them
		case flushErr != nil:
			errs = append(errs, "flush the spans: "+redact.String(flushErr.Error()))
		}
	}
	if metricsErr != nil {
		errs = append(errs, "export the metrics: "+redact.String(metricsErr.Error()))
	}
	errMsg := strings.Join(errs, "; ")
	rec.Error = errMsg
	sum.OTLP = rec
	fmt.Fprintf(log, "[%s] %s\n", sum.Name, Line(rec))
}

// Line says in one line what a run sent: "otlp: 1200 spans to URL (1000
// requests, 200 episodes), metrics sent", and when spans were dropped,
// how many and the last error.
func Line(r *rundir.OTLPExport) string {
	s := fmt.Sprintf("otlp: %d of %d spans delivered to %s (%d requests, %d episodes)",
		r.SpansExported, r.RequestSpans+r.EpisodeSpans, r.Endpoint, r.RequestSpans, r.EpisodeSpans)
	if r.Endpoint == "" {
		s = "otlp: spans not exported (no traces endpoint)"
	}
	if r.SpansDropped > 0 {
		s += fmt.Sprintf("; %d spans dropped", r.SpansDropped)
	}
	if r.MetricsExported {
		s += "; metrics sent"
	} else {
		s += "; metrics not sent"
	}
	if r.Error != "" {
		s += "; last error: " + r.Error
	}
	return s
}
