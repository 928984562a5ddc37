package otelexport

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/forensics"
)

// Link attribute of an episode joined to its request by a bearer token.
const joinedByKey = attribute.Key("leakbench.joined_by")

// episodeRun is what every episode span of one run shares.
type episodeRun struct {
	stuckAfter float64
	common     []attribute.KeyValue
	byToken    map[tokenKey]rundir.Request // the token join's requests
}

type tokenKey struct {
	pid   int32
	start time.Time
}

// exportEpisodes ends a span for each episode of the run in dir, in
// chunks of at most half the queue with a flush after each, so that a
// reachable collector loses none; it stops at the first flush that fails
// (the collector is down: the rest would be dropped too).
func (x *Exporter) exportEpisodes(ctx context.Context, dir string, sum *rundir.Summary, dbAddr string) error {
	f, err := os.Open(filepath.Join(dir, rundir.EpisodesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the episodes for export: %w", err)
	}
	defer f.Close()
	er := episodeRun{stuckAfter: 1}
	if sum.Forensics != nil && sum.Forensics.StuckAfterSeconds > 0 {
		er.stuckAfter = sum.Forensics.StuckAfterSeconds
	}
	er.common = []attribute.KeyValue{semconv.DBSystemNamePostgreSQL, attribute.String("leakbench.run", sum.Name)}
	if db := sum.Environment.Database; db != "" {
		er.common = append(er.common, semconv.DBNamespace(db))
	}
	if host, port, err := net.SplitHostPort(dbAddr); err == nil {
		er.common = append(er.common, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			er.common = append(er.common, semconv.ServerPort(p))
		}
	}
	if v := sum.Environment.Variant; v != "" {
		er.common = append(er.common, attribute.String("leakbench.pattern", v))
	}
	if tas, err := forensics.TokenAttributions(dir, er.stuckAfter); err == nil {
		for _, ta := range tas {
			if ta.Joined {
				if er.byToken == nil {
					er.byToken = map[tokenKey]rundir.Request{}
				}
				er.byToken[tokenKey{ta.PID, ta.Start}] = ta.Request
			}
		}
	}
	chunk := max(1, x.cfg.MaxQueue/2)
	n := 0
	var flushErr error
	_, err = jsonl.Each(f, -1, func(e *rundir.Episode) {
		if flushErr != nil {
			return
		}
		x.episodeSpan(e, &er)
		if n++; n%chunk == 0 {
			flushErr = x.flush(ctx)
		}
	})
	if err != nil {
		return fmt.Errorf("read the episodes for export: %w", err)
	}
	return flushErr
}

// episodeSpan ends the span of one episode.
func (x *Exporter) episodeSpan(e *rundir.Episode, er *episodeRun) {
	ctx := context.Background()
	op := operation(e.Query)
	summary := "idle in transaction"
	if op != "" {
		summary += " after " + op
	}
	stuck := e.HoldSeconds >= er.stuckAfter
	leaked := stuck && e.EndReason != rundir.EndReleased
	attrs := append(append(make([]attribute.KeyValue, 0, len(er.common)+16), er.common...),
		semconv.DBQuerySummary(summary),
		attribute.Float64("leakbench.hold_seconds", e.HoldSeconds),
		attribute.String("leakbench.end_reason", e.EndReason),
		attribute.Bool("leakbench.end_exact", e.EndExact),
		attribute.Bool("leakbench.stuck", stuck),
		attribute.Bool("leakbench.leaked", leaked),
		attribute.Int("leakbench.backend_pid", int(e.PID)),
	)
	if op != "" {
		attrs = append(attrs, semconv.DBOperationName(op))
	}
	if e.Query != "" {
		attrs = append(attrs, semconv.DBQueryText(e.Query))
	}
	if e.Fingerprint != "" {
		attrs = append(attrs, attribute.String("leakbench.culprit", e.Fingerprint))
	}
	if e.ApplicationName != "" {
		attrs = append(attrs, attribute.String("leakbench.application_name", e.ApplicationName))
	}
	if e.Aborted {
		attrs = append(attrs, attribute.Bool("leakbench.aborted", true))
	}
	if e.Blocked > 0 {
		attrs = append(attrs, attribute.Int("leakbench.blocked", e.Blocked))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(e.Start)}
	if tid, ok := traceID(e.TraceID); ok {
		// Joined by trace context: in the request's trace, the child of
		// the span the session's SQL named (the request's own, when the
		// service passed its traceparent on), else of no span there.
		attrs = append(attrs, joinedByKey.String(rundir.JoinedByTrace))
		if sid, ok := spanID(e.SpanID); ok {
			ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true}))
		} else {
			ctx = context.WithValue(ctx, idsKey{}, fixedIDs{trace: tid})
		}
	} else if r, ok := er.byToken[tokenKey{e.PID, e.Start}]; ok {
		// Joined by a bearer token: a trace of its own, linked to the
		// request's span.
		rt, _ := traceID(r.TraceID)
		rs, _ := spanID(r.SpanID)
		attrs = append(attrs, joinedByKey.String(rundir.JoinedByToken))
		opts = append(opts, trace.WithLinks(trace.Link{
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: rt, SpanID: rs, TraceFlags: trace.FlagsSampled, Remote: true}),
			Attributes:  []attribute.KeyValue{joinedByKey.String(rundir.JoinedByToken)},
		}))
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	_, span := x.tracer.Start(ctx, summary, opts...)
	if leaked {
		span.SetStatus(codes.Error, "leaked: "+e.EndReason)
	}
	end := e.End
	if end.Before(e.Start) {
		end = e.Start
	}
	span.End(trace.WithTimestamp(end))
	x.episodeSpans.Add(1)
}

// operation is the SQL keyword a query starts with (SELECT, UPDATE, …),
// after any leading comments; "" when there is none.
func operation(q string) string {
	q = strings.TrimSpace(q)
	for strings.HasPrefix(q, "/*") {
		end := strings.Index(q, "*/")
		if end < 0 {
			return ""
		}
		q = strings.TrimSpace(q[end+2:])
	}
	w := q
	if i := strings.IndexFunc(q, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }); i >= 0 {
		w = q[:i]
	}
	if len(w) > 16 {
		return ""
	}
	return strings.ToUpper(w)
}

func traceID(s string) (trace.TraceID, bool) {
	var t trace.TraceID
	if len(s) != 32 {
		return t, false
	}
	if _, err := hex.Decode(t[:], []byte(s)); err != nil {
		return t, false
	}
	return t, t.IsValid()
}

func spanID(s string) (trace.SpanID, bool) {
	var id trace.SpanID
	if len(s) != 16 {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, false
	}
	return id, id.IsValid()
}
