package poolmetrics

import (
	"context"
	"database/sql"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for the go_sql collector
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/goleak"
)

// gatewayRegistry exports a pool under the reference gateway's names.
func gatewayRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	for name, v := range map[string]float64{
		"acquired_connections": 4, "idle_connections": 1, "total_connections": 5, "max_connections": 5, "unclosed_sessions": 2,
	} {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcp_gateway_db_pool_" + name, Help: name})
		g.Set(v)
		reg.MustRegister(g)
	}
	for name, v := range map[string]float64{"acquire_waits": 7, "acquire_wait_seconds": 1.25, "acquires_canceled": 3, "acquires": 100} {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "mcp_gateway_db_pool_" + name + "_total", Help: name})
		c.Add(v)
		reg.MustRegister(c)
	}
	return reg
}

// openMetricsOnly serves reg in OpenMetrics 1.0.0 whatever the request
// asks for, as some exporters do.
func openMetricsOnly(reg *prometheus.Registry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fams, err := reg.Gather()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", string(expfmt.FmtOpenMetrics_1_0_0))
		enc := expfmt.NewEncoder(w, expfmt.FmtOpenMetrics_1_0_0)
		for _, f := range fams {
			_ = enc.Encode(f)
		}
		_ = enc.(expfmt.Closer).Close()
	})
}

func fileHandler(t *testing.T, path, contentType string) http.Handler {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return staticHandler(contentType, string(b), http.StatusOK)
}

func staticHandler(contentType, body string, status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	})
}

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/metrics"
}

func TestScrape(t *testing.T) {
	defer goleak.VerifyNone(t)
	db, err := sql.Open("pgx", "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(6)
	goSQL := prometheus.NewRegistry()
	goSQL.MustRegister(collectors.NewDBStatsCollector(db, "mcp"))

	const html = "<!DOCTYPE html>\n<html><body>Welcome</body></html>"
	cases := []struct {
		name     string
		handler  http.Handler
		url      string // instead of a handler
		mapping  string
		mappings map[string]Mapping
		want     rundir.AppPoolSample
		wantErr  string
	}{
		{name: "go_sql: client_golang's DBStatsCollector, text", handler: promhttp.HandlerFor(goSQL, promhttp.HandlerOpts{}),
			want: rundir.AppPoolSample{Max: 6, Mapping: "go_sql", Targets: 1}},
		{name: "gateway names, OpenMetrics only", handler: openMetricsOnly(gatewayRegistry(t)),
			want: rundir.AppPoolSample{Acquired: 4, Idle: 1, Total: 5, Max: 5, AcquireWaitsTotal: 7, AcquireWaitSecondsTotal: 1.25,
				CanceledAcquiresTotal: 3, UnclosedSessions: 2, Mapping: "gateway", Targets: 1}},
		{name: "gateway names, negotiated by promhttp", handler: promhttp.HandlerFor(gatewayRegistry(t), promhttp.HandlerOpts{EnableOpenMetrics: true}),
			mapping: "gateway",
			want: rundir.AppPoolSample{Acquired: 4, Idle: 1, Total: 5, Max: 5, AcquireWaitsTotal: 7, AcquireWaitSecondsTotal: 1.25,
				CanceledAcquiresTotal: 3, UnclosedSessions: 2, Mapping: "gateway", Targets: 1}},
		{name: "hikaricp through Micrometer, detected", handler: fileHandler(t, "testdata/hikaricp.prom", "text/plain; version=0.0.4; charset=utf-8"),
			want: rundir.AppPoolSample{Acquired: 10, Total: 10, Max: 10, AcquireWaitSecondsTotal: 3.5, CanceledAcquiresTotal: 2, Waiting: 4,
				Mapping: "hikaricp", Targets: 1}},
		{name: "sqlalchemy: engines summed, total from acquired + idle", handler: fileHandler(t, "testdata/sqlalchemy.prom", "text/plain"),
			want: rundir.AppPoolSample{Acquired: 8, Idle: 5, Total: 13, Max: 13, Mapping: "sqlalchemy", Targets: 1}},
		{name: "custom mapping picks one engine by label", handler: fileHandler(t, "testdata/sqlalchemy.prom", "text/plain"),
			mapping: "main-engine", mappings: map[string]Mapping{"main-engine": {
				Acquired: "sqlalchemy_pool_checkedout", Idle: "sqlalchemy_pool_checkedin", Max: "sqlalchemy_pool_size",
				Labels: map[string]string{"engine": "main"}}},
			want: rundir.AppPoolSample{Acquired: 7, Idle: 1, Total: 8, Max: 8, Mapping: "main-engine", Targets: 1}},
		{name: "HTML page", handler: staticHandler("text/html; charset=utf-8", html, http.StatusOK), wantErr: "HTML page, not Prometheus metrics: point the scrape at the service's metrics endpoint (usually /metrics)"},
		{name: "HTML page sent as text/plain", handler: staticHandler("text/plain", html, http.StatusOK), wantErr: "HTML page"},
		{name: "garbage", handler: staticHandler("text/plain", "hello {{ world\n", http.StatusOK), wantErr: "not in the Prometheus text or OpenMetrics format"},
		{name: "404", handler: staticHandler("text/plain", "404 page not found", http.StatusNotFound), wantErr: "HTTP 404 Not Found: point the scrape at the service's metrics endpoint"},
		{name: "metrics without a pool", handler: staticHandler("text/plain", "# TYPE up gauge\nup 1\n", http.StatusOK), wantErr: "no connection-pool series"},
		{name: "mapping whose series are absent", handler: promhttp.HandlerFor(goSQL, promhttp.HandlerOpts{}), mapping: "hikaricp",
			wantErr: `pool mapping "hikaricp": the endpoint has neither`},
		{name: "nothing listening", url: closedURL(t), wantErr: "nothing is listening there"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := c.url
			if c.handler != nil {
				srv := httptest.NewServer(c.handler)
				defer srv.Close()
				u = srv.URL + "/metrics"
			}
			s, err := NewScraper([]Target{{URL: u, Mapping: c.mapping}}, c.mappings, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := s.scrape(context.Background(), s.targets[0])
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("scrape: %v", err)
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestScraperRound: two targets are summed; a failing one is reported
// and does not stop the other; a round is taken once.
func TestScraperRound(t *testing.T) {
	defer goleak.VerifyNone(t)
	good := httptest.NewServer(promhttp.HandlerFor(gatewayRegistry(t), promhttp.HandlerOpts{}))
	defer good.Close()
	good2 := httptest.NewServer(promhttp.HandlerFor(gatewayRegistry(t), promhttp.HandlerOpts{}))
	defer good2.Close()
	bad := httptest.NewServer(staticHandler("text/html", "<html></html>", http.StatusOK))
	defer bad.Close()
	var mu sync.Mutex
	var worked, failed []string
	report := func(source string, err error, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			worked = append(worked, source)
		} else {
			failed = append(failed, source+": "+err.Error())
		}
	}
	s, err := NewScraper([]Target{
		{URL: good.URL + "/metrics"}, {URL: "http://user:pw-secret@" + strings.TrimPrefix(bad.URL, "http://") + "/"}, {URL: good2.URL + "/metrics"},
	}, nil, report)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if last, at := s.Last(); last != nil || !at.IsZero() {
		t.Errorf("Last before a round: %+v at %v, want nothing", last, at)
	}
	s.Round(context.Background())
	got := s.Take()
	if got == nil || got.Acquired != 8 || got.Max != 10 || got.Targets != 2 || got.Mapping != "gateway" {
		t.Fatalf("round: %+v, want two gateway pools summed", got)
	}
	if again := s.Take(); again != nil {
		t.Errorf("second take: %+v, want nil", again)
	}
	if last, at := s.Last(); last != got || at.IsZero() {
		t.Errorf("Last: %+v at %v, want the round taken", last, at)
	}
	s.Round(context.Background())
	if len(worked) != 4 || len(failed) != 2 {
		t.Fatalf("reported %d working and %d failing (%q), want 4 and 2", len(worked), len(failed), failed)
	}
	for _, f := range failed {
		if !strings.Contains(f, "scrape http://user:xxxxx@") || !strings.Contains(f, "HTML") || strings.Contains(f, "pw-secret") {
			t.Errorf("failure %q, want one about HTML from the masked URL", f)
		}
	}
}

// TestNewScraperSources: the same URL twice gets two source names, and a
// named mapping is part of the name.
func TestNewScraperSources(t *testing.T) {
	s, err := NewScraper([]Target{{URL: "http://h/metrics"}, {URL: "http://h/metrics"}, {URL: "http://h/metrics", Mapping: "go_sql"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range s.targets {
		got = append(got, tg.source)
	}
	want := []string{"scrape http://h/metrics", "scrape http://h/metrics #2", "scrape http://h/metrics (go_sql)"}
	if !slices.Equal(got, want) {
		t.Errorf("sources %q, want %q", got, want)
	}
	if _, err := NewScraper([]Target{{URL: "http://h/metrics", Mapping: "c3p0"}}, nil, nil); err == nil || !strings.Contains(err.Error(), `unknown pool mapping "c3p0"`) {
		t.Errorf("unknown mapping: %v", err)
	}
}
