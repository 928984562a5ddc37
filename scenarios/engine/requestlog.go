package engine

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/reqindex"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// The request index: every MCP request the engine sends carries a new W3C
// trace (a random trace id and span id, as OpenTelemetry's span context;
// package mcp injects it as the traceparent header and params._meta), and
// with RunOptions.RunDir the engine appends one line per request to
// requests.jsonl (package reqindex writes it, with bounded memory).

// requestLog feeds the request index from the users, and the span sink
// when there is one (spans.go; w is nil with a sink but no run directory).
type requestLog struct {
	w     *reqindex.Writer
	spans SpanSink
	scen  []string // scenario names, for spans
}

func openRequestLog(dir string, e *engine) (*requestLog, error) {
	names := make([]string, len(e.runs))
	for i, sr := range e.runs {
		names[i] = sr.cs.Name
	}
	w, err := reqindex.Open(filepath.Join(dir, rundir.RequestsFile), names, len(e.m.shards))
	if err != nil {
		return nil, err
	}
	return &requestLog{w: w}, nil
}

func (l *requestLog) flush() {
	if l.w != nil {
		l.w.Flush()
	}
}

func (l *requestLog) close() {
	if l.w != nil {
		_ = l.w.Close()
	}
}

// reqInfo is what a user notes about the request it is about to send.
type reqInfo struct {
	trace trace.TraceID
	span  trace.SpanID // the traceparent's parent-id: the request's span
	step  int          // -1: an initialize the engine sent by itself
	name  string       // tool or prompt name
	sent  time.Time
}

// traced returns ctx with a new trace for the next request (step c, nil:
// none; name: its tool or prompt name) and notes it for record.
func (v *vu) traced(ctx context.Context, c *step, name string) context.Context {
	tid, sid := newIDs()
	// Set on the session rather than carried by a context: a context per
	// request would cost two allocations (v.record clears it).
	v.s.SetTrace(tid, sid)
	v.req = reqInfo{trace: tid, span: sid, step: -1, name: name, sent: time.Now()}
	if c != nil {
		v.req.step = c.idx
	}
	return ctx
}

// newIDs returns a new trace id and span id, random (the runtime's
// per-thread generator: cheap, and not the scenario's seeded one, whose
// sequence stays as it was) and never all zero.
func newIDs() (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	var sid trace.SpanID
	binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(tid[8:], rand.Uint64()|1) // never all zero: invalid
	binary.LittleEndian.PutUint64(sid[:], rand.Uint64()|1)
	return tid, sid
}

// newTrace returns ctx with a new sampled span context of random ids (the
// runtime's per-thread generator: cheap, and not the scenario's seeded
// one, whose sequence stays as it was), and its trace id.
func newTrace(ctx context.Context) (context.Context, trace.TraceID) {
	tid, sid := newIDs()
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})), tid
}

func withNewTrace(ctx context.Context) context.Context {
	ctx, _ = newTrace(ctx)
	return ctx
}

// add appends the line of the request v just finished.
func (l *requestLog) add(v *vu, op uint8, err error) {
	r := reqindex.Request{Trace: v.req.trace, Span: v.req.span, User: v.tc.User, Scenario: int(v.cs.idx), Iteration: int64(v.tc.Iteration),
		Step: v.req.step, Method: opName(op), Name: v.req.name, Start: v.req.sent, Took: time.Since(v.req.sent), Outcome: rundir.RequestOK}
	switch k := mcp.Classify(err); k {
	case "":
	case mcp.KindAborted:
		r.Outcome = rundir.RequestAborted
	case mcp.KindTimeout:
		r.Outcome = rundir.RequestTimeout
	case mcp.KindCanceled:
		r.Outcome = rundir.RequestCanceled
	default:
		r.Outcome, r.Kind = rundir.RequestFailed, k
	}
	if l.w != nil {
		l.w.Add(&r)
	}
	if l.spans != nil {
		l.spans.RequestEnded(&r, l.scen[r.Scenario])
	}
}

// numberSteps gives every step of a flow its position, depth first from 0
// (choose branches in order), as requests.jsonl's step names it.
func numberSteps(flow []step) []step {
	n := 0
	var walk func([]step)
	walk = func(steps []step) {
		for i := range steps {
			steps[i].idx = n
			n++
			for _, ch := range steps[i].choices {
				walk(ch)
			}
		}
	}
	walk(flow)
	return flow
}
