package engine

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp"
)

// The request index: every MCP request the engine sends carries a new W3C
// trace (a random trace id and span id, as OpenTelemetry's span context;
// package mcp injects it as the traceparent header and params._meta), and
// with RunOptions.RunDir the engine appends one line per request to
// requests.jsonl (rundir.Request, scenarios/FORMAT.md): the trace id with
// who sent it, what it was, and what came of it. Reports join the
// episodes the probe saw to these lines by the trace id that the service's
// SQL carried (sqlcommenter).
//
// Memory is bounded whatever the run's length: lines are appended to a
// buffer per shard of users and written out with one write(2) when the
// buffer passes reqFlushBytes, and every second by the monitor; nothing
// else is kept. A line is about 230 bytes: 5,000 requests a second make
// about 1.1 MB/s of file, and the buffers hold at most
// shards × (reqFlushBytes + one line) in memory.

// reqFlushBytes is the buffer size at which a shard writes its lines out.
const reqFlushBytes = 32 << 10

type requestLog struct {
	f      *os.File
	scen   [][]byte // each scenario's name, as a JSON string
	shards []reqShard

	errMu sync.Mutex
	err   error // the first write error; the index stops there
}

type reqShard struct {
	mu  sync.Mutex
	buf []byte
	_   [40]byte // keep shards' locks on separate cache lines
}

func openRequestLog(dir string, e *engine) (*requestLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, rundir.RequestsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rundir.RequestsFile, err)
	}
	l := &requestLog{f: f, shards: make([]reqShard, len(e.m.shards))}
	for _, sr := range e.runs {
		l.scen = append(l.scen, textutil.AppendJSONString(nil, sr.cs.Name))
	}
	for i := range l.shards {
		l.shards[i].buf = make([]byte, 0, reqFlushBytes+512)
	}
	return l, nil
}

// reqInfo is what a user notes about the request it is about to send.
type reqInfo struct {
	trace trace.TraceID
	step  int    // -1: an initialize the engine sent by itself
	name  string // tool or prompt name
	sent  time.Time
}

// traced returns ctx with a new trace for the next request (step c, nil:
// none; name: its tool or prompt name) and notes it for record.
func (v *vu) traced(ctx context.Context, c *step, name string) context.Context {
	ctx, tid := newTrace(ctx)
	v.req = reqInfo{trace: tid, step: -1, name: name, sent: time.Now()}
	if c != nil {
		v.req.step = c.idx
	}
	return ctx
}

// newTrace returns ctx with a new sampled span context of random ids (the
// runtime's per-thread generator: cheap, and not the scenario's seeded
// one, whose sequence stays as it was), and its trace id.
func newTrace(ctx context.Context) (context.Context, trace.TraceID) {
	var tid trace.TraceID
	var sid trace.SpanID
	binary.LittleEndian.PutUint64(tid[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(tid[8:], rand.Uint64()|1) // never all zero: invalid
	binary.LittleEndian.PutUint64(sid[:], rand.Uint64()|1)
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})), tid
}

func withNewTrace(ctx context.Context) context.Context {
	ctx, _ = newTrace(ctx)
	return ctx
}

// add appends the line of the request v just finished.
func (l *requestLog) add(v *vu, op uint8, err error) {
	took := time.Since(v.req.sent)
	outcome, kind := rundir.RequestOK, ""
	switch k := mcp.Classify(err); k {
	case "":
	case mcp.KindAborted:
		outcome = rundir.RequestAborted
	case mcp.KindTimeout:
		outcome = rundir.RequestTimeout
	case mcp.KindCanceled:
		outcome = rundir.RequestCanceled
	default:
		outcome, kind = rundir.RequestFailed, k
	}
	sh := &l.shards[v.tc.User%len(l.shards)]
	sh.mu.Lock()
	b := sh.buf
	b = append(b, `{"trace_id":"`...)
	b = hex.AppendEncode(b, v.req.trace[:])
	b = append(b, `","user":`...)
	b = strconv.AppendInt(b, int64(v.tc.User), 10)
	b = append(b, `,"scenario":`...)
	b = append(b, l.scen[v.cs.idx]...)
	b = append(b, `,"iteration":`...)
	b = strconv.AppendInt(b, int64(v.tc.Iteration), 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(v.req.step), 10)
	b = append(b, `,"method":"`...)
	b = append(b, opName(op)...)
	b = append(b, '"')
	if v.req.name != "" {
		b = append(b, `,"name":`...)
		b = textutil.AppendJSONString(b, v.req.name)
	}
	b = append(b, `,"start":"`...)
	b = v.req.sent.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","seconds":`...)
	b = strconv.AppendFloat(b, took.Seconds(), 'f', 6, 64)
	b = append(b, `,"outcome":"`...)
	b = append(b, outcome...)
	b = append(b, '"')
	if kind != "" {
		b = append(b, `,"kind":"`...)
		b = append(b, kind...) // one of mcp.Kinds: no escaping needed
		b = append(b, '"')
	}
	b = append(b, "}\n"...)
	if len(b) >= reqFlushBytes {
		l.write(b)
		b = b[:0]
	}
	sh.buf = b
	sh.mu.Unlock()
}

// write hands whole lines to the file in one write(2). It is called with
// the shard's lock held.
func (l *requestLog) write(b []byte) {
	if len(b) == 0 {
		return
	}
	l.errMu.Lock()
	failed := l.err != nil
	l.errMu.Unlock()
	if failed {
		return
	}
	if _, err := l.f.Write(b); err != nil {
		l.errMu.Lock()
		l.err = fmt.Errorf("write %s: %w", rundir.RequestsFile, err)
		l.errMu.Unlock()
	}
}

// flush writes out every shard's lines (the monitor, once a second).
func (l *requestLog) flush() {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		l.write(sh.buf)
		sh.buf = sh.buf[:0]
		sh.mu.Unlock()
	}
}

func (l *requestLog) close() {
	l.flush()
	_ = l.f.Close()
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
