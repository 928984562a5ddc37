package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

// outputs are the run's live outputs: load.jsonl and /metrics.
type outputs struct {
	load     *os.File
	loadHist *hdrlog.IntervalLog // load.hlog (loadhist.go)
	requests *requestLog         // requests.jsonl (requestlog.go)
	metrics  *live.Server
	watch    Watcher // nil: nobody watches (watch.go)
}

func openOutputs(opts RunOptions, e *engine) (*outputs, error) {
	out := &outputs{}
	if opts.RunDir != "" {
		if err := os.MkdirAll(opts.RunDir, 0o755); err != nil {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(opts.RunDir, rundir.LoadFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", rundir.LoadFile, err)
		}
		out.load = f
		if out.loadHist, err = openLoadHistLog(opts.RunDir, time.Now()); err != nil {
			out.close()
			return nil, err
		}
		if out.requests, err = openRequestLog(opts.RunDir, e); err != nil {
			out.close()
			return nil, err
		}
		e.reqlog = out.requests
	}
	e.withSpans(opts.Spans) // spans.go
	out.watch = opts.Watch
	if opts.Live != nil {
		opts.Live(e.liveSnapshot)
	}
	if opts.MetricsAddr != "" {
		ms, err := live.Serve(opts.MetricsAddr, e.liveSnapshot, opts.Gatherer)
		if err != nil {
			out.close()
			return nil, err
		}
		out.metrics = ms
	}
	return out, nil
}

func (o *outputs) close() {
	if o.requests != nil {
		o.requests.close()
	}
	if o.load != nil {
		_ = o.load.Close()
	}
	_ = o.loadHist.Close()
	o.metrics.Close()
}
