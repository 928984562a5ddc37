// Package otelexport sends a run to an OpenTelemetry collector over
// OTLP/HTTP, with the official OpenTelemetry Go SDK and its exporters:
//
//   - each request the engine sends is a client span with the trace id and
//     span id its traceparent carried (scenarios/engine.SpanSink), sampled
//     by trace id ratio, batched by the SDK's BatchSpanProcessor with a
//     bounded queue: when the queue is full a span is dropped, and counted;
//   - each idle-in-transaction episode the probe saw is a span named and
//     attributed by the database semantic conventions (db.system.name
//     postgresql, db.namespace, db.query.text as recorded — masked unless
//     --keep-query-text —, server.address) and leakbench's own
//     (leakbench.hold_seconds, leakbench.end_reason, leakbench.stuck, …).
//     Joined by trace context, it is a child of the span whose id the
//     session's SQL carried, in the request's trace; joined by a bearer
//     token, it links to the request's span; a leak has status Error;
//   - the run's key figures are OTLP gauges (leakbench.stuck.max,
//     leakbench.leaked, leakbench.release.p99, leakbench.error_rate,
//     leakbench.requests).
//
// Nothing is exported unless --otlp-endpoint or one of the standard
// OTEL_EXPORTER_OTLP_*ENDPOINT variables is set; the flag wins over the
// variables, which (headers, timeout, TLS files) the SDK reads as usual.
//
//	x, err := otelexport.Start(ctx, otelexport.Config{Endpoint: "http://127.0.0.1:4318", SampleRatio: 1})
//	if err != nil { ... }
//	defer x.Shutdown(ctx)            // x is nil when nothing is to be exported: every method accepts that
//	opts.Spans = x.Spans("before")   // engine.RunOptions; nil when x is nil
//	... the run ...
//	x.RunWritten(ctx, dir, sum, "127.0.0.1:5432", os.Stderr) // episodes and figures; sum.OTLP says what was delivered
//	x.ProbeWritten(ctx, out, dsn, "", time.Second, os.Stderr) // after `leakbench probe`
package otelexport
