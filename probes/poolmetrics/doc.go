// Package poolmetrics reads the service's own connection pool from its
// Prometheus metrics: it scrapes endpoints (Target), decodes the classic
// text format or OpenMetrics, and turns the series a Mapping names into
// one rundir.AppPoolSample a round, summed over the targets that answered.
//
// The built-in mappings cover the reference gateway, Go's database/sql
// (client_golang's DBStatsCollector), HikariCP (Micrometer), SQLAlchemy,
// and OpenTelemetry's connection-pool semantic conventions as its
// Prometheus exporters name them (otel; otel_legacy for the names up to
// v1.24 that opentelemetry-instrumentation-sqlalchemy exports), so that a
// service instrumented with OpenTelemetry needs no exporter of its own;
// an endpoint whose mapping is auto gets the first of them
// whose series it exports, and other exporters are described by a named
// Mapping. A failed scrape is told to a report function with what is wrong
// and what to do, by a source name that masks any password in the URL.
//
// A Scraper does not tick on its own: its owner (the probes Poller) calls
// Round every scrape interval in a goroutine of its own, so that a slow
// endpoint never delays anything else, and Take hands the last round on
// once.
//
//	s, err := poolmetrics.NewScraper([]poolmetrics.Target{{URL: metricsURL}}, nil, report)
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	s.Round(ctx)
//	if pool := s.Take(); pool != nil {
//		fmt.Printf("%g of %g connections acquired (%s)\n", pool.Acquired, pool.Max, pool.Mapping)
//	}
package poolmetrics
