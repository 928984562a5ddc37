package poolmetrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Scrape limits: a scrape that takes longer is abandoned (the next one
// comes with the next Round), and a body larger than maxScrapeBytes is
// not a metrics page worth reading.
const (
	scrapeTimeout  = 2 * time.Second
	maxScrapeBytes = 32 << 20
)

// scrapeAccept prefers the classic text format, which parses fastest, and
// takes OpenMetrics from exporters that only speak that.
const scrapeAccept = `text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.7,*/*;q=0.1`

// Scraper reads the service's own pool metrics from its targets, one
// Round at a time; Take hands each finished round on once, Last keeps it.
// Round may run in one goroutine while Take and Last are called from
// others.
type Scraper struct {
	targets   []*scrapeTarget
	transport *http.Transport
	client    *http.Client
	report    func(source string, err error, at time.Time)

	mu     sync.Mutex
	result *rundir.AppPoolSample // the last round's sum, until taken
	latest *rundir.AppPoolSample // the last round's sum, kept
	at     time.Time
}

type scrapeTarget struct {
	url     string
	source  string    // "scrape " + the URL with any password masked
	mapping *compiled // nil: detect
}

// NewScraper reads targets, whose mappings it resolves among custom and
// the built-in ones. report, when not nil, is told the outcome of every
// scrape of a target (err nil: it worked), by a source name of its own:
// "scrape " and the URL with any password masked, the mapping when one is
// named, and "#2" and on when the same name comes again.
func NewScraper(targets []Target, custom map[string]Mapping, report func(source string, err error, at time.Time)) (*Scraper, error) {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: scrapeTimeout}).DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	s := &Scraper{transport: tr, report: report, client: &http.Client{Transport: tr, Timeout: scrapeTimeout}}
	seen := make(map[string]int)
	for _, t := range targets {
		m, err := resolve(t.Mapping, custom)
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

// Round scrapes all targets concurrently and publishes their sum; a
// round in which none answered publishes nothing. A scrape cut short by
// ctx is neither reported nor counted.
func (s *Scraper) Round(ctx context.Context) {
	pools := make([]*rundir.AppPoolSample, len(s.targets))
	var wg sync.WaitGroup
	for i, t := range s.targets {
		wg.Go(func() {
			p, err := s.scrape(ctx, t)
			if ctx.Err() != nil {
				return
			}
			if s.report != nil {
				s.report(t.source, err, time.Now())
			}
			if err == nil {
				pools[i] = &p
			}
		})
	}
	wg.Wait()
	var sum *rundir.AppPoolSample
	for _, p := range pools {
		if p == nil {
			continue
		}
		if sum == nil {
			sum = &rundir.AppPoolSample{}
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

// Take returns the last round's pools once: nil until another round
// publishes.
func (s *Scraper) Take() *rundir.AppPoolSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	s.result = nil
	return r
}

// Last returns the last round's pools and when they were read (nil and
// the zero time before the first).
func (s *Scraper) Last() (*rundir.AppPoolSample, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest, s.at
}

// Close closes the idle connections to the targets. Call it once no
// Round runs any more.
func (s *Scraper) Close() {
	s.transport.CloseIdleConnections()
}

// scrape reads one target. Its errors say what is wrong and what to do.
func (s *Scraper) scrape(ctx context.Context, t *scrapeTarget) (rundir.AppPoolSample, error) {
	var none rundir.AppPoolSample
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
		return none, fmt.Errorf("not in the Prometheus text or OpenMetrics format (%w): is this a metrics endpoint?", err)
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
		return none, fmt.Errorf("pool mapping %q: the endpoint has neither its acquired series (%s) nor its max series (%s)", m.Name, m.acquired, m.max)
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
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w — nothing is listening there: is the service running, and is that its metrics port?", err)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w — no answer within %s", err, scrapeTimeout)
	}
	return err
}

func builtinPrefixes() string {
	var names []string
	for _, m := range builtinCompiled {
		for _, sel := range m.acquired {
			if !slices.Contains(names, sel.name) {
				names = append(names, sel.name)
			}
		}
	}
	return strings.Join(names, ", ")
}
