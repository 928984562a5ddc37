package otelexport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
)

// Exporter sends one command's runs to a collector. A nil *Exporter
// exports nothing; all its methods accept that.
type Exporter struct {
	cfg      Config
	endpoint string // traces endpoint, credentials masked
	tp       *sdktrace.TracerProvider
	tracer   trace.Tracer
	sampler  sdktrace.Sampler
	counted  *countingExporter
	metrics  *metricsExport // nil: metrics not exported (metrics.go)

	requestSpans atomic.Int64 // request spans ended (sampled)
	episodeSpans atomic.Int64

	mu   sync.Mutex
	last counts          // at the end of the previous run: each run's figures are its own
	live map[string]bool // runs whose requests came through Spans as they ended (replay.go)
}

// counts are the span counters at one moment.
type counts struct{ requests, episodes, exported, failed int64 }

// Start sets up the export; it returns nil and no error when cfg exports
// nothing (no flag, no variable). No connection is made before the first
// batch: a collector that is down does not stop the run.
func Start(ctx context.Context, cfg Config) (*Exporter, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	sig := cfg.signals()
	if !sig.traces && !sig.metrics {
		return nil, nil
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = DefaultMaxQueue
	}
	if cfg.FlushTimeout <= 0 {
		cfg.FlushTimeout = DefaultFlushTimeout
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("leakbench"), semconv.ServiceVersion(cfg.Version)))
	if err != nil {
		res = resource.Default() // a schema conflict in the environment's resource: keep the SDK's
	}
	x := &Exporter{cfg: cfg, endpoint: cfg.tracesEndpoint(), sampler: sdktrace.TraceIDRatioBased(cfg.SampleRatio)}
	otel.SetErrorHandler(firstError(cfg.Log))
	if sig.traces {
		opts := []otlptracehttp.Option{
			// Bounded: a collector that answers with retryable errors
			// holds one batch for at most this long, while the queue
			// fills and later spans are dropped.
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
				MaxInterval: 2 * time.Second, MaxElapsedTime: 5 * time.Second}),
		}
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(signalURL(cfg.Endpoint, "/v1/traces")))
		}
		exp, err := otlptracehttp.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("set up the OTLP trace exporter for %s: %w", x.endpoint, err)
		}
		x.counted = &countingExporter{SpanExporter: exp}
		x.tp = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithSampler(sdktrace.AlwaysSample()), // requests are sampled before their span starts
			sdktrace.WithIDGenerator(idGenerator{}),
			sdktrace.WithBatcher(x.counted, sdktrace.WithMaxQueueSize(cfg.MaxQueue),
				sdktrace.WithMaxExportBatchSize(min(512, cfg.MaxQueue))),
		)
		x.tracer = x.tp.Tracer("github.com/leakbench/leakbench", trace.WithInstrumentationVersion(cfg.Version))
	}
	if sig.metrics {
		if x.metrics, err = startMetrics(ctx, cfg, res); err != nil {
			_ = x.Shutdown(ctx)
			return nil, err
		}
	}
	return x, nil
}

// Endpoint is where spans go, credentials masked ("" when only metrics
// are exported).
func (x *Exporter) Endpoint() string {
	if x == nil {
		return ""
	}
	return x.endpoint
}

// Spans returns the sink for the engine's requests of the run named run
// (engine.RunOptions.Spans), nil when spans are not exported.
func (x *Exporter) Spans(run string) engine.SpanSink {
	if x == nil || x.tp == nil || x.cfg.SampleRatio <= 0 {
		return nil
	}
	x.markLive(run)
	return &requestSpans{x: x, run: attribute.String("leakbench.run", run)}
}

// requestSpans turns the engine's requests into client spans.
type requestSpans struct {
	x   *Exporter
	run attribute.KeyValue
}

// The MCP and GenAI semantic conventions' attributes (still in
// development: the stable semconv package has no constants for them).
const (
	mcpMethodName = attribute.Key("mcp.method.name")
	genAIToolName = attribute.Key("gen_ai.tool.name")
)

// idsKey carries the ids a span must have to the ID generator.
type idsKey struct{}

type fixedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// RequestEnded ends a client span of the request, with the ids its
// traceparent carried, when its trace id is sampled.
func (s *requestSpans) RequestEnded(r *reqindex.Request, scenario string) {
	x := s.x
	tid := trace.TraceID(r.Trace)
	if x.cfg.SampleRatio < 1 && x.sampler.ShouldSample(sdktrace.SamplingParameters{TraceID: tid}).Decision != sdktrace.RecordAndSample {
		return
	}
	ctx := context.WithValue(context.Background(), idsKey{}, fixedIDs{tid, trace.SpanID(r.Span)})
	name := r.Method
	if r.Name != "" {
		name += " " + r.Name
	}
	// What a trace view needs to find the request among the run's; the
	// rest is in requests.jsonl. Each attribute costs on every span —
	// copied into the span, converted and encoded by the exporter, about
	// four allocations each — so an ok request, the common case, carries
	// no outcome (its status says it), and the attributes go to the span
	// itself rather than through a start option, which copies them once
	// more.
	var attrs [9]attribute.KeyValue
	a := append(attrs[:0],
		mcpMethodName.String(r.Method),
		attribute.String("leakbench.scenario", scenario),
		attribute.Int("leakbench.user", r.User),
		attribute.Int64("leakbench.iteration", r.Iteration),
		s.run,
	)
	if r.Name != "" {
		if r.Method == "tools/call" {
			a = append(a, genAIToolName.String(r.Name))
		} else {
			a = append(a, attribute.String("leakbench.name", r.Name))
		}
	}
	failed := r.Outcome != rundir.RequestOK
	if failed {
		kind := r.Kind
		if kind == "" {
			kind = r.Outcome
		}
		a = append(a, attribute.String("leakbench.outcome", r.Outcome), semconv.ErrorTypeKey.String(kind))
	}
	_, span := x.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(r.Start))
	span.SetAttributes(a...)
	if failed {
		span.SetStatus(codes.Error, r.Outcome)
	}
	span.End(trace.WithTimestamp(r.Start.Add(r.Took)))
	x.requestSpans.Add(1)
}

// idGenerator gives a span the ids its context names (a request's, sent
// in its traceparent; an episode's trace), else random ones.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	ids, _ := ctx.Value(idsKey{}).(fixedIDs)
	if !ids.trace.IsValid() {
		ids.trace = randomTraceID()
	}
	if !ids.span.IsValid() {
		ids.span = randomSpanID()
	}
	return ids.trace, ids.span
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if ids, _ := ctx.Value(idsKey{}).(fixedIDs); ids.span.IsValid() {
		return ids.span
	}
	return randomSpanID()
}

func randomTraceID() trace.TraceID {
	var t trace.TraceID
	a, b := rand.Uint64(), rand.Uint64()|1
	for i := range 8 {
		t[i], t[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
	}
	return t
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	a := rand.Uint64() | 1
	for i := range 8 {
		s[i] = byte(a >> (8 * i))
	}
	return s
}

// firstError is the SDK's error handler: the first export error goes to
// w, the rest are counted in the run's dropped spans.
func firstError(w io.Writer) otel.ErrorHandlerFunc {
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			if w != nil {
				fmt.Fprintf(w, "otlp: export failing, spans are dropped and counted (summary.json otlp): %s\n", redact.String(err.Error()))
			}
		})
	}
}

// countingExporter counts the spans the collector took and those whose
// export failed; with the spans ended, that gives the spans dropped.
type countingExporter struct {
	sdktrace.SpanExporter
	exported, failed atomic.Int64
	lastErr          atomic.Pointer[string]
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		c.failed.Add(int64(len(spans)))
		msg := redact.String(err.Error())
		c.lastErr.Store(&msg)
		return err
	}
	c.exported.Add(int64(len(spans)))
	return nil
}

func (x *Exporter) counts() counts {
	c := counts{requests: x.requestSpans.Load(), episodes: x.episodeSpans.Load()}
	if x.counted != nil {
		c.exported, c.failed = x.counted.exported.Load(), x.counted.failed.Load()
	}
	return c
}

// flush waits, at most FlushTimeout, for the queued spans to be exported.
func (x *Exporter) flush(ctx context.Context) error {
	if x.tp == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.cfg.FlushTimeout)
	defer cancel()
	return x.tp.ForceFlush(ctx)
}

// Shutdown exports what is queued (at most FlushTimeout) and stops the
// exporters.
func (x *Exporter) Shutdown(ctx context.Context) error {
	if x == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.cfg.FlushTimeout)
	defer cancel()
	var errs []error
	if x.tp != nil {
		if err := x.tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the OTLP trace export: %w", err))
		}
	}
	if x.metrics != nil {
		if err := x.metrics.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop the OTLP metric export: %w", err))
		}
	}
	return errors.Join(errs...)
}
