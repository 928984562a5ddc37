package probes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Scrape limits: a scrape that takes longer is abandoned (the next one
// comes at the next tick), and a body larger than maxScrapeBytes is not a
// metrics page worth reading.
const (
	scrapeTimeout  = 2 * time.Second
	maxScrapeBytes = 32 << 20
)

// scrapeAccept prefers the classic text format, which parses fastest, and
// takes OpenMetrics from exporters that only speak that.
const scrapeAccept = `text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.7,*/*;q=0.1`

// scraper reads the service's own pool metrics on its own ticker, so that
// a slow or dead endpoint never delays the database samples. The Poller
// takes each finished round with take.
type scraper struct {
	targets   []*scrapeTarget
	interval  time.Duration
	transport *http.Transport
	client    *http.Client
	warn      *warnings

	mu     sync.Mutex
	result *AppPoolSample // the last round's sum, until taken
	latest *AppPoolSample // the last round's sum, kept
	at     time.Time

	done chan struct{}
}

type scrapeTarget struct {
	url     string
	source  string       // "scrape " + the URL with any password masked
	mapping *PoolMapping // nil: detect
}

func newScraper(cfg Config, warn *warnings) (*scraper, error) {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: scrapeTimeout}).DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	s := &scraper{interval: cfg.ScrapeInterval, transport: tr, warn: warn, done: make(chan struct{}),
		client: &http.Client{Transport: tr, Timeout: scrapeTimeout}}
	seen := make(map[string]int)
	for _, t := range cfg.Scrape {
		m, err := cfg.mapping(t.Mapping)
		if err != nil {
			return nil, err
		}
		// Warnings are told apart by source: the same URL twice (with
		// different mappings, say) needs two names.
		source := "scrape " + redactURL(t.URL)
		if t.Mapping != "" {
			source += " (" + t.Mapping + ")"
		}
		if seen[source]++; seen[source] > 1 {
			source += fmt.Sprintf(" #%d", seen[source])
		}
		s.targets = append(s.targets, &scrapeTarget{url: t.URL, source: source, mapping: m})
	}
	return s, nil
}

// run scrapes every target at once and then every interval until ctx ends.
func (s *scraper) run(ctx context.Context) {
	defer close(s.done)
	every(ctx, s.interval, s.round)
}

// round scrapes all targets concurrently and publishes their sum.
func (s *scraper) round(ctx context.Context) {
	pools := make([]*AppPoolSample, len(s.targets))
	var wg sync.WaitGroup
	for i, t := range s.targets {
		wg.Go(func() {
			p, err := s.scrape(ctx, t)
			if ctx.Err() != nil {
				return
			}
			s.warn.report(t.source, err, time.Now())
			if err == nil {
				pools[i] = &p
			}
		})
	}
	wg.Wait()
	var sum *AppPoolSample
	for _, p := range pools {
		if p == nil {
			continue
		}
		if sum == nil {
			sum = &AppPoolSample{}
		}
		sum.Add(*p)
	}
	if sum == nil {
		return
	}
	s.mu.Lock()
	s.result, s.latest, s.at = sum, sum, time.Now()
	s.mu.Unlock()
}

// take returns the last round's pools once.
func (s *scraper) take() *AppPoolSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	s.result = nil
	return r
}

// last returns the last round's pools and when they were read.
func (s *scraper) last() (*AppPoolSample, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest, s.at
}

func (s *scraper) close() {
	<-s.done
	s.transport.CloseIdleConnections()
}

// scrape reads one target. Its errors say what is wrong and what to do.
func (s *scraper) scrape(ctx context.Context, t *scrapeTarget) (AppPoolSample, error) {
	var none AppPoolSample
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return none, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", scrapeAccept)
	resp, err := s.client.Do(req)
	if err != nil {
		return none, scrapeFetchError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxScrapeBytes+1))
	if err != nil {
		return none, fmt.Errorf("read the response: %w", scrapeFetchError(err))
	}
	if resp.StatusCode != http.StatusOK {
		return none, fmt.Errorf("HTTP %s: point the scrape at the service's metrics endpoint (usually /metrics)", resp.Status)
	}
	if len(body) > maxScrapeBytes {
		return none, fmt.Errorf("the response is larger than %d MB: not a metrics page", maxScrapeBytes>>20)
	}
	if isHTML(resp.Header.Get("Content-Type"), body) {
		return none, errors.New("returned an HTML page, not Prometheus metrics: point the scrape at the service's metrics endpoint (usually /metrics), not a web page")
	}
	fams, err := parseMetrics(resp.Header, body)
	if err != nil {
		return none, fmt.Errorf("not in the Prometheus text or OpenMetrics format (%v): is this a metrics endpoint?", err)
	}
	idx := indexFamilies(fams)
	m := t.mapping
	if m == nil {
		if m = idx.detect(); m == nil {
			return none, fmt.Errorf("no connection-pool series among %d metric families (looked for %s): name the exporter's series in a pool mapping", len(fams), builtinPrefixes())
		}
	}
	p, ok := idx.read(m)
	if !ok {
		return none, fmt.Errorf("pool mapping %q: the endpoint has neither its acquired series (%q) nor its max series (%q)", m.Name, m.Acquired, m.Max)
	}
	return p, nil
}

// parseMetrics decodes a scrape in the format its Content-Type says, the
// classic text format when it says nothing usable.
func parseMetrics(h http.Header, body []byte) ([]*dto.MetricFamily, error) {
	format := expfmt.ResponseFormat(h)
	if format == expfmt.FmtUnknown {
		format = expfmt.NewFormat(expfmt.TypeTextPlain)
	}
	dec := expfmt.NewDecoder(bytes.NewReader(body), format)
	var fams []*dto.MetricFamily
	for {
		f := &dto.MetricFamily{}
		err := dec.Decode(f)
		if errors.Is(err, io.EOF) {
			return fams, nil
		}
		if err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
}

func isHTML(contentType string, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	head := strings.ToLower(string(bytes.TrimSpace(body[:min(len(body), 512)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

// scrapeFetchError says what to do about a failed request.
func scrapeFetchError(err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w — nothing is listening there: is the service running, and is that its metrics port?", err)
	case isTimeout(err):
		return fmt.Errorf("%w — no answer within %s", err, scrapeTimeout)
	}
	return err
}

func builtinPrefixes() string {
	var names []string
	for _, m := range builtinMappings {
		names = append(names, m.Acquired)
	}
	return strings.Join(names, ", ")
}
