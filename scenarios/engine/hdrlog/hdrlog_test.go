package hdrlog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func hist(values ...int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, v := range values {
		h.RecordValue(v) //nolint:errcheck
	}
	return h
}

// TestWriteRead: a series log reads back by tag, histograms of one tag
// summed, each histogram's own tag and times left as they were.
func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "histograms.hlog")
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	a, b := hist(100, 200, 300), hist(5000)
	a.SetTag("mine")
	if err := Write(path, t0, t0.Add(time.Minute), "a comment", []string{"s0", "s0"}, []*hdrhistogram.Histogram{a, b}); err != nil {
		t.Fatal(err)
	}
	if a.Tag() != "mine" {
		t.Errorf("Write changed the histogram's own tag to %q", a.Tag())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["s0"].TotalCount() != 4 || got["s0"].Max() < 4990 {
		t.Errorf("read back %v", got)
	}
	if err := Write(path, t0, t0, "", []string{"x"}, nil); err == nil {
		t.Error("a tag without a histogram was written")
	}
}

// TestIntervalLog: intervals appended one by one are there after each,
// empty histograms left out; a log cut short passes its whole histograms
// to Each and then fails.
func TestIntervalLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "load.hlog")
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	l, err := Create(path, t0, "intervals")
	if err != nil {
		t.Fatal(err)
	}
	for s := range 3 {
		l.Interval(t0.Add(time.Duration(s)*time.Second), t0.Add(time.Duration(s+1)*time.Second),
			Tagged{Tag: "all", Hist: hist(int64(1000 * (s + 1)))}, Tagged{Tag: "http", Hist: hist()}, Tagged{Tag: "none"})
	}
	raw, err := os.ReadFile(path) // before Close: flushed interval by interval
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil || l.Err() != nil {
		t.Fatal(err, l.Err())
	}
	var ends []int64
	if err := Each(bytes.NewReader(raw), func(h *hdrhistogram.Histogram) {
		if h.Tag() != "all" {
			t.Errorf("tag %q written", h.Tag())
		}
		ends = append(ends, h.EndTimeMs())
	}); err != nil {
		t.Fatal(err)
	}
	if len(ends) != 3 || ends[2] != t0.Add(3*time.Second).UnixMilli() {
		t.Fatalf("intervals ending %v", ends)
	}
	cut := raw[:len(raw)-20]
	n := 0
	err = Each(bytes.NewReader(cut), func(*hdrhistogram.Histogram) { n++ })
	if err == nil || n != 2 {
		t.Errorf("cut log: %d histograms, error %v; want 2 and an error", n, err)
	}
	var nilLog *IntervalLog
	nilLog.Interval(t0, t0, Tagged{Tag: "all", Hist: hist(1)})
	if nilLog.Err() != nil || nilLog.Close() != nil {
		t.Error("a nil log is not a no-op")
	}
}
