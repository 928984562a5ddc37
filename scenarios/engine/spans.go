package engine

import "github.com/leakbench/leakbench/scenarios/engine/reqindex"

// SpanSink gets every request the engine sent as it ends, for a tracing
// exporter (internal/app/otelexport turns each into an OpenTelemetry
// client span of the trace the request carried). r is the request's line
// of the request index, with the span id its traceparent carried; scenario
// is the name of r.Scenario. RequestEnded is called on the user's
// goroutine, once per request: it must not block and must not keep r.
//
// Without RunOptions.Spans the engine calls nothing: the cost is one nil
// check per request.
type SpanSink interface {
	RequestEnded(r *reqindex.Request, scenario string)
}

// withSpans makes the request log feed sink, opening a log without an
// index file when the run has no run directory.
func (e *engine) withSpans(sink SpanSink) {
	if sink == nil {
		return
	}
	if e.reqlog == nil {
		e.reqlog = &requestLog{}
	}
	e.reqlog.spans = sink
	e.reqlog.scen = make([]string, len(e.runs))
	for i, sr := range e.runs {
		e.reqlog.scen[i] = sr.cs.Name
	}
}
