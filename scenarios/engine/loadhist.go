package engine

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/rundir"
)

// Tags of load.hlog's interval histograms.
const (
	LoadTagAll  = "all"  // every answered request of the interval
	LoadTagHTTP = "http" // the http steps' share
)

// loadHistLog appends each load.jsonl interval's latency histograms to
// load.hlog (rundir.LoadHistogramsFile), in the HdrHistogram log format:
// what load.jsonl's percentiles were computed from, so that leakbench
// merge computes a merged second's percentiles exactly instead of taking
// the largest shard's. An interval costs one compressed histogram (a few
// hundred bytes) per tag with requests.
type loadHistLog struct {
	f   *os.File
	buf *bufio.Writer
	w   *hdrhistogram.HistogramLogWriter
	err error // the first write error; the log stops there
}

func openLoadHistLog(dir string) (*loadHistLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, rundir.LoadHistogramsFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rundir.LoadHistogramsFile, err)
	}
	buf := bufio.NewWriter(f)
	return &loadHistLog{f: f, buf: buf, w: hdrhistogram.NewHistogramLogWriter(buf)}, nil
}

// start writes the log's header once the run's start is known.
func (l *loadHistLog) start(started time.Time) {
	l.err = errors.Join(l.w.OutputLogFormatVersion(), l.w.OutputStartTime(started.UnixMilli()),
		l.w.OutputComment("leakbench "+rundir.LoadFile+"'s intervals: tags all and http; values in microseconds"),
		l.w.OutputLegend())
}

// interval writes the histograms of the interval from..to (empty ones
// left out) and flushes them.
func (l *loadHistLog) interval(from, to time.Time, all, http *hdrhistogram.Histogram) {
	if l == nil || l.err != nil {
		return
	}
	for _, t := range []struct {
		tag string
		h   *hdrhistogram.Histogram
	}{{LoadTagAll, all}, {LoadTagHTTP, http}} {
		if t.h.TotalCount() == 0 {
			continue
		}
		t.h.SetTag(t.tag)
		t.h.SetStartTimeMs(from.UnixMilli())
		t.h.SetEndTimeMs(to.UnixMilli())
		err := l.w.OutputIntervalHistogram(t.h)
		t.h.SetTag("")
		if err != nil {
			l.err = err
			return
		}
	}
	l.err = l.buf.Flush()
}

func (l *loadHistLog) close() {
	if l == nil {
		return
	}
	_ = l.buf.Flush()
	_ = l.f.Close()
}
