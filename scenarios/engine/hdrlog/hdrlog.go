// Package hdrlog reads and writes the HdrHistogram logs of a run
// directory — histograms.hlog (one histogram per series over the run) and
// load.hlog (one per tag and load.jsonl interval, appended as the run
// goes) — in the standard interval-log format (1.3) that hdrhistogram-go's
// HistogramLogWriter writes and HdrHistogram's HistogramLogProcessor reads.
// Values are microseconds; merging histograms is exact.
//
// The format is hdrhistogram-go's; this package adds only what a run
// directory needs of it: whole files written atomically, tags, a log that
// is appended and flushed interval by interval, and a reader that sums
// histograms by tag.
package hdrlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Every histogram of a run directory has one geometry, so that any two
// merge exactly: microseconds from 1 µs to 1 h, 3 significant digits
// (~170 KiB each). The top is far above any request timeout because
// arrival-rate latencies count from the intended start.
const (
	MinMicros = 1
	MaxMicros = int64(time.Hour / time.Microsecond)
	sigFigs   = 3
)

// New returns an empty histogram of the run directory's geometry: the
// engine records into these, and sums of them (a Result's summaries, a
// merge of shards) are made of them.
func New() *hdrhistogram.Histogram { return hdrhistogram.New(MinMicros, MaxMicros, sigFigs) }

// Write writes hists to path, each over start..end and tagged tags[i],
// atomically (a reader sees the whole file or none). comment, if set, is
// written as the log's comment line.
func Write(path string, start, end time.Time, comment string, tags []string, hists []*hdrhistogram.Histogram) error {
	if len(tags) != len(hists) {
		return fmt.Errorf("encode %s: %d tags for %d histograms", filepath.Base(path), len(tags), len(hists))
	}
	var buf bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&buf)
	err := header(w, start, comment)
	for i, h := range hists {
		if err != nil {
			break
		}
		err = writeTagged(w, h, tags[i], start, end)
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return rundir.WriteFile(path, buf.Bytes())
}

func header(w *hdrhistogram.HistogramLogWriter, start time.Time, comment string) error {
	err := errors.Join(w.OutputLogFormatVersion(), w.OutputStartTime(start.UnixMilli()))
	if comment != "" {
		err = errors.Join(err, w.OutputComment(comment))
	}
	return errors.Join(err, w.OutputLegend())
}

// writeTagged writes h as the interval from..to under tag, leaving h's
// own tag and times as they were.
func writeTagged(w *hdrhistogram.HistogramLogWriter, h *hdrhistogram.Histogram, tag string, from, to time.Time) error {
	oldTag, oldStart, oldEnd := h.Tag(), h.StartTimeMs(), h.EndTimeMs()
	defer func() { h.SetTag(oldTag); h.SetStartTimeMs(oldStart); h.SetEndTimeMs(oldEnd) }()
	h.SetTag(tag)
	h.SetStartTimeMs(from.UnixMilli())
	h.SetEndTimeMs(to.UnixMilli())
	return w.OutputIntervalHistogram(h)
}

// Interval is one interval of a log: its span and its tagged histograms.
type Interval struct {
	From, To time.Time
	Hists    []Tagged
}

// WriteIntervals writes a whole interval log to path atomically: each
// interval's histograms that counted something, in order.
func WriteIntervals(path string, start time.Time, comment string, intervals []Interval) error {
	var buf bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&buf)
	err := header(w, start, comment)
	for _, iv := range intervals {
		for _, t := range iv.Hists {
			if err != nil || t.Hist == nil || t.Hist.TotalCount() == 0 {
				continue
			}
			err = writeTagged(w, t.Hist, t.Tag, iv.From, iv.To)
		}
	}
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return rundir.WriteFile(path, buf.Bytes())
}

// Read reads every histogram of a log, summing those with the same tag.
func Read(r io.Reader) (map[string]*hdrhistogram.Histogram, error) {
	out := map[string]*hdrhistogram.Histogram{}
	err := Each(r, func(h *hdrhistogram.Histogram) {
		if prev := out[h.Tag()]; prev != nil {
			prev.Merge(h)
		} else {
			out[h.Tag()] = h
		}
	})
	return out, err
}

// Each calls f with every histogram of a log, in order, with its tag and
// interval. Its error is the reader's: a log cut short by a kill ends
// with one, after every whole histogram before the cut was passed to f.
func Each(r io.Reader, f func(*hdrhistogram.Histogram)) error {
	lr := hdrhistogram.NewHistogramLogReader(bufio.NewReader(r))
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return err
		}
		if h == nil {
			return nil
		}
		f(h)
	}
}

// IntervalLog is a log appended interval by interval as a run goes, each
// interval flushed to the file at once so that a killed run keeps what it
// had written. It stops at its first write error (Err).
type IntervalLog struct {
	f   *os.File
	buf *bufio.Writer
	w   *hdrhistogram.HistogramLogWriter
	err error
}

// Create creates (or truncates) the log at path and writes its header.
func Create(path string, start time.Time, comment string) (*IntervalLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	buf := bufio.NewWriter(f)
	l := &IntervalLog{f: f, buf: buf, w: hdrhistogram.NewHistogramLogWriter(buf)}
	l.err = header(l.w, start, comment)
	return l, nil
}

// Tagged is one histogram of an interval and its tag.
type Tagged struct {
	Tag  string
	Hist *hdrhistogram.Histogram
}

// Interval appends the interval from..to: each histogram that counted
// something, under its tag. Safe on nil.
func (l *IntervalLog) Interval(from, to time.Time, hists ...Tagged) {
	if l == nil || l.err != nil {
		return
	}
	for _, t := range hists {
		if t.Hist == nil || t.Hist.TotalCount() == 0 {
			continue
		}
		if l.err = writeTagged(l.w, t.Hist, t.Tag, from, to); l.err != nil {
			return
		}
	}
	l.err = l.buf.Flush()
}

// Err is the first write error, if any.
func (l *IntervalLog) Err() error {
	if l == nil {
		return nil
	}
	return l.err
}

// Close flushes and closes the log. Safe on nil.
func (l *IntervalLog) Close() error {
	if l == nil {
		return nil
	}
	return errors.Join(l.buf.Flush(), l.f.Close())
}
