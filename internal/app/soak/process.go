package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The service's process figures, as client_golang's process and Go
// collectors export them.
const (
	metricRSS        = "process_resident_memory_bytes"
	metricFDs        = "process_open_fds"
	metricGoroutines = "go_goroutines"
)

// sampler records the service's process figures (its /metrics) and
// leakbench's own resident memory (/proc/self/statm) once a second into
// process.jsonl, until stopped.
type sampler struct {
	url    string
	client *http.Client
	f      *os.File
	stop   context.CancelFunc
	done   chan struct{}
}

// startSampler starts sampling into dir's process.jsonl; url is the
// service's /metrics ("" when it has none).
func startSampler(ctx context.Context, dir, url string) (*sampler, error) {
	f, err := os.OpenFile(dir+"/"+rundir.ProcessFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rundir.ProcessFile, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{url: url, client: &http.Client{Timeout: 2 * time.Second}, f: f, stop: cancel, done: make(chan struct{})}
	go s.loop(ctx)
	return s, nil
}

func (s *sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample takes one reading and appends it with one write.
func (s *sampler) sample(ctx context.Context) {
	p := rundir.ProcessSample{Time: time.Now().UTC(), Leakbench: ownFigures()}
	if s.url != "" {
		f, err := s.scrape(ctx)
		if err != nil {
			p.Error = redact.String(err.Error())
		}
		p.Service = f
	}
	line, err := json.Marshal(p)
	if err == nil {
		_, _ = s.f.Write(append(line, '\n')) // one write: a kill leaves whole lines; a lost reading is a gap, not a failed soak
	}
}

// Stop ends the sampling and closes the file.
func (s *sampler) Stop() error {
	s.stop()
	<-s.done
	return s.f.Close()
}

// scrape reads the three figures from the service's /metrics.
func (s *sampler) scrape(ctx context.Context) (*rundir.ProcessFigures, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", redact.URL(s.url), err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", redact.URL(s.url), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", redact.URL(s.url), resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", redact.URL(s.url), err)
	}
	return parseFigures(body)
}

// parseFigures reads the process figures from a Prometheus text
// exposition; a figure not exposed stays nil.
func parseFigures(body []byte) (*rundir.ProcessFigures, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse the service's metrics: %w", err)
	}
	get := func(name string) *float64 {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) == 0 {
			return nil
		}
		var v float64
		for _, m := range f.GetMetric() { // summed over label sets
			switch {
			case m.GetGauge() != nil:
				v += m.GetGauge().GetValue()
			case m.GetUntyped() != nil:
				v += m.GetUntyped().GetValue()
			}
		}
		return &v
	}
	return &rundir.ProcessFigures{RSSBytes: get(metricRSS), OpenFDs: get(metricFDs), Goroutines: get(metricGoroutines)}, nil
}

// ownFigures is leakbench's own resident memory and open file descriptors
// from /proc/self; nil where /proc is not there.
func ownFigures() *rundir.ProcessFigures {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return nil
	}
	fields := strings.Fields(string(raw))
	if len(fields) < 2 {
		return nil
	}
	pages, err := strconv.ParseFloat(fields[1], 64)
	if err != nil {
		return nil
	}
	rss := pages * float64(os.Getpagesize())
	f := &rundir.ProcessFigures{RSSBytes: &rss}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		n := float64(len(ents))
		f.OpenFDs = &n
	}
	return f
}
