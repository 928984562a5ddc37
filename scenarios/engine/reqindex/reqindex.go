// Package reqindex writes a run's request index, requests.jsonl: one line
// per request the engine sent (rundir.Request; scenarios/FORMAT.md), keyed
// by the W3C trace id the request carried. Reports join the episodes the
// probe saw to these lines by the trace id the service's SQL carried
// (sqlcommenter).
//
// Memory is bounded whatever the run's length: lines are appended to a
// buffer per shard of users and written out with one write(2) when the
// buffer passes FlushBytes, and on Flush (the engine's monitor, every
// second); nothing else is kept. A line is about 230 bytes: 5,000 requests
// a second make about 1.1 MB/s of file, and the buffers hold at most
// shards × (FlushBytes + one line). Lines are formatted by hand, without
// reflection, because this is on every request's path.
package reqindex

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// FlushBytes is the buffer size at which a shard writes its lines out.
const FlushBytes = 32 << 10

// Request is one line as the engine knows it; rundir.Request is its JSON
// form.
type Request struct {
	Trace     [16]byte
	Span      [8]byte // the traceparent's parent-id; all zero: not written
	User      int
	Scenario  int // index into the scenario names given to Open
	Iteration int64
	Step      int
	Method    string // written as is: an MCP method name or "http"
	Name      string
	Start     time.Time
	Took      time.Duration
	Outcome   string // one of rundir's Request outcomes
	Kind      string // one of mcp.Kinds: written as is
}

// Writer appends lines to a request index. Add, Flush and Close are safe
// for concurrent use.
type Writer struct {
	f      *os.File
	scen   [][]byte // each scenario's name, as a JSON string
	shards []shard

	errMu sync.Mutex
	err   error // the first write error; the index stops there
}

type shard struct {
	mu  sync.Mutex
	buf []byte
	_   [40]byte // keep shards' locks on separate cache lines
}

// Open opens (appends to) the index at path for a run of the given
// scenarios, with shards buffers (users are spread over them by index).
func Open(path string, scenarios []string, shards int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	w := &Writer{f: f, shards: make([]shard, max(shards, 1))}
	for _, s := range scenarios {
		w.scen = append(w.scen, textutil.AppendJSONString(nil, s))
	}
	for i := range w.shards {
		w.shards[i].buf = make([]byte, 0, FlushBytes+512)
	}
	return w, nil
}

// Add appends r's line.
func (w *Writer) Add(r *Request) {
	sh := &w.shards[r.User%len(w.shards)]
	sh.mu.Lock()
	b := sh.buf
	b = append(b, `{"trace_id":"`...)
	b = hex.AppendEncode(b, r.Trace[:])
	b = append(b, `","user":`...)
	b = strconv.AppendInt(b, int64(r.User), 10)
	b = append(b, `,"scenario":`...)
	b = append(b, w.scen[r.Scenario]...)
	b = append(b, `,"iteration":`...)
	b = strconv.AppendInt(b, r.Iteration, 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(r.Step), 10)
	b = append(b, `,"method":"`...)
	b = append(b, r.Method...)
	b = append(b, '"')
	if r.Name != "" {
		b = append(b, `,"name":`...)
		b = textutil.AppendJSONString(b, r.Name)
	}
	b = append(b, `,"start":"`...)
	b = r.Start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","seconds":`...)
	b = strconv.AppendFloat(b, r.Took.Seconds(), 'f', 6, 64)
	b = append(b, `,"outcome":"`...)
	b = append(b, r.Outcome...)
	b = append(b, '"')
	if r.Kind != "" {
		b = append(b, `,"kind":"`...)
		b = append(b, r.Kind...)
		b = append(b, '"')
	}
	if r.Span != ([8]byte{}) {
		// Last: readers skip lines by the trace_id and user at the start.
		b = append(b, `,"span_id":"`...)
		b = hex.AppendEncode(b, r.Span[:])
		b = append(b, '"')
	}
	b = append(b, "}\n"...)
	if len(b) >= FlushBytes {
		w.write(b)
		b = b[:0]
	}
	sh.buf = b
	sh.mu.Unlock()
}

// write hands whole lines to the file in one write(2). It is called with
// the shard's lock held.
func (w *Writer) write(b []byte) {
	if len(b) == 0 {
		return
	}
	w.errMu.Lock()
	failed := w.err != nil
	w.errMu.Unlock()
	if failed {
		return
	}
	if _, err := w.f.Write(b); err != nil {
		w.errMu.Lock()
		w.err = fmt.Errorf("write %s: %w", filepath.Base(w.f.Name()), err)
		w.errMu.Unlock()
	}
}

// Flush writes out every shard's lines.
func (w *Writer) Flush() {
	for i := range w.shards {
		sh := &w.shards[i]
		sh.mu.Lock()
		w.write(sh.buf)
		sh.buf = sh.buf[:0]
		sh.mu.Unlock()
	}
}

// Err is the first write error, if any: the index stopped there.
func (w *Writer) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// Close flushes and closes the index.
func (w *Writer) Close() error {
	w.Flush()
	return w.f.Close()
}
