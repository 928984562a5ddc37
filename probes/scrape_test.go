package probes

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver for the go_sql collector
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
		mappings map[string]PoolMapping
		want     AppPoolSample
		wantErr  string
	}{
		{name: "go_sql: client_golang's DBStatsCollector, text", handler: promhttp.HandlerFor(goSQL, promhttp.HandlerOpts{}),
			want: AppPoolSample{Max: 6, Mapping: "go_sql", Targets: 1}},
		{name: "gateway names, OpenMetrics only", handler: openMetricsOnly(gatewayRegistry(t)),
			want: AppPoolSample{Acquired: 4, Idle: 1, Total: 5, Max: 5, AcquireWaitsTotal: 7, AcquireWaitSecondsTotal: 1.25,
				CanceledAcquiresTotal: 3, UnclosedSessions: 2, Mapping: "gateway", Targets: 1}},
		{name: "gateway names, negotiated by promhttp", handler: promhttp.HandlerFor(gatewayRegistry(t), promhttp.HandlerOpts{EnableOpenMetrics: true}),
			mapping: "gateway",
			want: AppPoolSample{Acquired: 4, Idle: 1, Total: 5, Max: 5, AcquireWaitsTotal: 7, AcquireWaitSecondsTotal: 1.25,
				CanceledAcquiresTotal: 3, UnclosedSessions: 2, Mapping: "gateway", Targets: 1}},
		{name: "hikaricp through Micrometer, detected", handler: fileHandler(t, "testdata/hikaricp.prom", "text/plain; version=0.0.4; charset=utf-8"),
			want: AppPoolSample{Acquired: 10, Total: 10, Max: 10, AcquireWaitSecondsTotal: 3.5, CanceledAcquiresTotal: 2, Waiting: 4,
				Mapping: "hikaricp", Targets: 1}},
		{name: "sqlalchemy: engines summed, total from acquired + idle", handler: fileHandler(t, "testdata/sqlalchemy.prom", "text/plain"),
			want: AppPoolSample{Acquired: 8, Idle: 5, Total: 13, Max: 13, Mapping: "sqlalchemy", Targets: 1}},
		{name: "custom mapping picks one engine by label", handler: fileHandler(t, "testdata/sqlalchemy.prom", "text/plain"),
			mapping: "main-engine", mappings: map[string]PoolMapping{"main-engine": {
				Acquired: "sqlalchemy_pool_checkedout", Idle: "sqlalchemy_pool_checkedin", Max: "sqlalchemy_pool_size",
				Labels: map[string]string{"engine": "main"}}},
			want: AppPoolSample{Acquired: 7, Idle: 1, Total: 8, Max: 8, Mapping: "main-engine", Targets: 1}},
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
			s, err := newScraper(Config{Scrape: []ScrapeTarget{{URL: u, Mapping: c.mapping}}, Mappings: c.mappings, ScrapeInterval: time.Second}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.transport.CloseIdleConnections()
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

func TestScrapeConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"not a URL", Config{DSN: "x", Scrape: []ScrapeTarget{{URL: "localhost:8080/metrics"}}}, "want http://host:port/path"},
		{"password masked", Config{DSN: "x", Scrape: []ScrapeTarget{{URL: "ftp://u:hunter22@h/metrics"}}}, "u:xxxxx@h"},
		{"unknown mapping", Config{DSN: "x", Scrape: []ScrapeTarget{{URL: "http://h/metrics", Mapping: "c3p0"}}}, `unknown pool mapping "c3p0" (known: auto, gateway, go_sql, hikaricp, sqlalchemy)`},
		{"empty mapping", Config{DSN: "x", Mappings: map[string]PoolMapping{"m": {Idle: "x"}}}, `mapping "m" names neither`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Start(context.Background(), c.cfg)
			if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter22") {
				t.Errorf("error %v, want ErrConfig containing %q", err, c.want)
			}
		})
	}
}

// TestScraperRound: two targets are summed; a failing one is a warning
// and does not stop the other; a round is taken once.
func TestScraperRound(t *testing.T) {
	defer goleak.VerifyNone(t)
	good := httptest.NewServer(promhttp.HandlerFor(gatewayRegistry(t), promhttp.HandlerOpts{}))
	defer good.Close()
	good2 := httptest.NewServer(promhttp.HandlerFor(gatewayRegistry(t), promhttp.HandlerOpts{}))
	defer good2.Close()
	bad := httptest.NewServer(staticHandler("text/html", "<html></html>", http.StatusOK))
	defer bad.Close()
	var warned []Warning
	w := newWarnings(func(x Warning) { warned = append(warned, x) })
	s, err := newScraper(Config{ScrapeInterval: time.Second, Scrape: []ScrapeTarget{
		{URL: good.URL + "/metrics"}, {URL: "http://user:pw-secret@" + strings.TrimPrefix(bad.URL, "http://") + "/"}, {URL: good2.URL + "/metrics"},
	}}, w)
	if err != nil {
		t.Fatal(err)
	}
	defer s.transport.CloseIdleConnections()
	s.round(context.Background())
	got := s.take()
	if got == nil || got.Acquired != 8 || got.Max != 10 || got.Targets != 2 || got.Mapping != "gateway" {
		t.Fatalf("round: %+v, want two gateway pools summed", got)
	}
	if again := s.take(); again != nil {
		t.Errorf("second take: %+v, want nil", again)
	}
	s.round(context.Background())
	if len(warned) != 1 || !strings.Contains(warned[0].Source, "user:xxxxx@") || !strings.Contains(warned[0].Message, "HTML") {
		t.Fatalf("warnings %+v, want one about HTML from the masked URL", warned)
	}
	if all := w.all(); len(all) != 1 || all[0].Count != 2 {
		t.Errorf("warnings so far %+v, want one seen twice", all)
	}
}
