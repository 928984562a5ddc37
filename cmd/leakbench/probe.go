package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/app/probe"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/probes/poolmetrics"
)

// scrapeFlags collects repeated --scrape [MAPPING=]URL flags.
type scrapeFlags []poolmetrics.Target

// String masks the URLs' credentials.
func (s *scrapeFlags) String() string {
	var parts []string
	for _, t := range *s {
		parts = append(parts, redact.URL(t.URL))
	}
	return strings.Join(parts, ",")
}

func (s *scrapeFlags) Set(v string) error {
	t := poolmetrics.Target{URL: v}
	if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		if name, u, ok := strings.Cut(v, "="); ok {
			t = poolmetrics.Target{URL: u, Mapping: name}
		}
	}
	*s = append(*s, t)
	return nil
}

func cmdProbe(ctx context.Context, c *cli, args []string) (err error) {
	fs := c.flagSet("probe")
	// The DSNs come from flags, files or the environment (never shown as
	// defaults: --help prints those, passwords included).
	svc := addServiceFlags(c, fs, serviceParts{}) // service.go: the probes only (required: --probe-dsn)
	dsnFlag, pgbouncerFlag := svc.ProbeDSN, svc.PgBouncer
	var scrapes scrapeFlags
	fs.Var(&scrapes, "metrics-url", "your service's Prometheus endpoint, for its pool metrics, scraped every second; repeatable.\n`[MAPPING=]URL`: MAPPING is gateway, go_sql, hikaricp, sqlalchemy or one from --mapping; default: detect")
	cliflag.Alias(fs, "scrape", "metrics-url")
	mappingFile := fs.String("mapping", "", "JSON `FILE` of pool mappings for exporters the probe does not know:\n{\"NAME\": {\"acquired\": \"series\", \"idle\": …, \"total\": …, \"max\": …, \"acquire_waits_total\": …,\n\"acquire_wait_seconds_total\": …, \"canceled_acquires_total\": …, \"unclosed_sessions\": …, \"labels\": {\"pool\": \"main\"}}}")
	database := fs.String("database", "", "database to watch (default: the DSN's)")
	interval := fs.Duration("interval", probes.DefaultInterval, "time between samples of pg_stat_activity (and PgBouncer)")
	stuckAfter := fs.Duration("stuck-after", probes.DefaultStuckAfter, "how long a session must sit idle in transaction to count as stuck")
	duration := fs.Duration("duration", 0, "stop after this long (default: run until Ctrl-C)")
	metricsAddr := fs.String("metrics-addr", "", "serve the probe's own metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9187)")
	out := fs.String("out", "", "directory to write samples.jsonl, episodes.jsonl and "+rundir.ProbeSummaryFile+" into (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	serverLog := fs.String("server-log", "", "PostgreSQL's log `FILE` as it is written (log_line_prefix '%m [%p] '): the server's own record of the backends it killed makes those episodes' ends exact (optional)")
	otlp := addOTLPFlags(fs)
	dash := addDashboardFlags(fs) // dashboard.go
	keepQueryText := fs.Bool("keep-query-text", false, "keep stuck sessions' raw query texts in --out (default: literals masked, since queries may hold e-mails, keys or passwords; sensitive)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench probe --probe-dsn DSN [--pgbouncer-admin-dsn DSN] [--metrics-url URL]... [--duration D] --out DIR

Attaches to a running system and watches it for leaked database connections: sessions left idle
in transaction, how long each held its connection, the query it was left after, PgBouncer's
waiting clients and the service's own pool. Shows a live status line once a second, and stops
cleanly on Ctrl-C or after --duration, leaving the samples, episodes and a summary in --out
(see probes/FORMAT.md). The probe only reads, on one connection, and never holds a transaction.

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	dsn, err := dsnFlag.Value()
	if err != nil {
		return err
	}
	if dsn == "" {
		return fmt.Errorf("%w: a PostgreSQL DSN is required (%s)", cliflag.ErrUsage, dsnFlag.Sources())
	}
	pgbouncer, err := pgbouncerFlag.Value()
	if err != nil {
		return err
	}
	if pgbouncer == "" {
		pgbouncer = c.getenv("LEAKBENCH_PROBE_PGBOUNCER") // the variable's older name
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", cliflag.ErrUsage)
	}
	if *duration < 0 {
		return fmt.Errorf("%w: --duration %s is negative", cliflag.ErrUsage, *duration)
	}
	mappings, err := readMappings(*mappingFile)
	if err != nil {
		return err
	}
	tel, err := otlp.start(ctx, c.progress())
	if err != nil {
		return err
	}
	defer tel.Shutdown(ctx)
	// Before the probe starts: a bad address fails here. The page
	// shows the database side alone (there is no load).
	d, err := dash.start(ctx, "probe", dashboard.NewProbeView(), c.stderr)
	if err != nil {
		return err
	}
	defer func() { err = d.close(err, "") }()
	_, statErr := os.Stat(*out)
	if err := rundir.Prepare(*out, *force); err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	s, err := probe.Start(ctx, probe.Options{
		DSN: dsn, PgBouncerAdminDSN: pgbouncer, Database: *database, Interval: *interval, StuckAfter: *stuckAfter,
		Scrape: scrapes, Mappings: mappings, MetricsAddr: *metricsAddr, Out: *out,
		ServerLogFile: *serverLog, KeepQueryText: *keepQueryText, Stdout: c.stdout, Stderr: c.stderr,
	})
	if err != nil {
		// Nothing was probed: leave no empty --out behind that looks like
		// a result (only a directory this command created, and only empty).
		if os.IsNotExist(statErr) {
			rundir.Discard(*out)
		}
		return err
	}
	d.probing(s.Status)
	err = s.Watch(ctx, *duration)
	// The episodes and figures to the collector, if one is named; after
	// Ctrl-C too (RunWritten's waits are bounded).
	tel.ProbeWritten(ctx, *out, dsn, *database, *stuckAfter, c.stderr)
	return err
}

// readMappings reads --mapping FILE.
func readMappings(path string) (map[string]poolmetrics.Mapping, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read --mapping file: %w", cliflag.ErrUsage, err)
	}
	var m map[string]poolmetrics.Mapping
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: --mapping %s: want a JSON object of mappings by name: %w", cliflag.ErrUsage, path, err)
	}
	return m, nil
}
