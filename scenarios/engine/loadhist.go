package engine

import (
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
)

// Tags of load.hlog's interval histograms.
const (
	LoadTagAll  = "all"  // every answered request of the interval
	LoadTagHTTP = "http" // the http steps' share
)

// openLoadHistLog opens load.hlog (rundir.LoadHistogramsFile), where each
// load.jsonl interval's latency histograms go (monitor.writeLine): what
// load.jsonl's percentiles were computed from, so that leakbench merge
// computes a merged second's percentiles exactly instead of taking the
// largest shard's. An interval costs one compressed histogram (a few
// hundred bytes) per tag with requests.
func openLoadHistLog(dir string, started time.Time) (*hdrlog.IntervalLog, error) {
	return hdrlog.Create(filepath.Join(dir, rundir.LoadHistogramsFile), started,
		"leakbench "+rundir.LoadFile+"'s intervals: tags all and http; values in microseconds")
}
