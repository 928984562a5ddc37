package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/lib/tty"
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

func cmdProbe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	// The DSNs come from flags, files or the environment (never shown as
	// defaults: --help prints those, passwords included).
	dsnFlag := newSecretFlag(fs, "probe-dsn", "LEAKBENCH_PROBE_DSN", "PostgreSQL `DSN`, directly (not through PgBouncer), as a role with pg_monitor; required", "dsn")
	pgbouncerFlag := newSecretFlag(fs, "pgbouncer-admin-dsn", "LEAKBENCH_PGBOUNCER_ADMIN_DSN", "PgBouncer admin console `DSN` (database \"pgbouncer\", a user in stats_users or admin_users)", "pgbouncer")
	var scrapes scrapeFlags
	fs.Var(&scrapes, "metrics-url", "the same as --scrape")
	fs.Var(&scrapes, "scrape", "Prometheus endpoint of the service's own connection pool, scraped every second; repeatable.\n`[MAPPING=]URL`: MAPPING is gateway, go_sql, hikaricp, sqlalchemy or one from --mapping; default: detect")
	mappingFile := fs.String("mapping", "", "JSON `FILE` of pool mappings for exporters the probe does not know:\n{\"NAME\": {\"acquired\": \"series\", \"idle\": …, \"total\": …, \"max\": …, \"acquire_waits_total\": …,\n\"acquire_wait_seconds_total\": …, \"canceled_acquires_total\": …, \"unclosed_sessions\": …, \"labels\": {\"pool\": \"main\"}}}")
	database := fs.String("database", "", "database to watch (default: the DSN's)")
	interval := fs.Duration("interval", probes.DefaultInterval, "time between samples of pg_stat_activity (and PgBouncer)")
	stuckAfter := fs.Duration("stuck-after", probes.DefaultStuckAfter, "how long a session must sit idle in transaction to count as stuck")
	duration := fs.Duration("duration", 0, "stop after this long (default: run until Ctrl-C)")
	metricsAddr := fs.String("metrics-addr", "", "serve the probe's own metrics at http://`ADDR`/metrics (e.g. 127.0.0.1:9187)")
	out := fs.String("out", "", "directory to write samples.jsonl, episodes.jsonl and "+rundir.ProbeSummaryFile+" into (required)")
	force := fs.Bool("force", false, "replace the contents of a non-empty --out directory")
	serverLog := fs.String("server-log", "", "PostgreSQL's log `FILE` as it is written (log_line_prefix '%m [%p] '): the server's own record of the backends it killed makes those episodes' ends exact (optional)")
	keepQueryText := fs.Bool("keep-query-text", false, "keep stuck sessions' raw query texts in --out (default: literals masked, since queries may hold e-mails, keys or passwords; sensitive)")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, `Usage: leakbench probe --probe-dsn DSN [--pgbouncer-admin-dsn DSN] [--scrape URL]... [--duration D] --out DIR

Attaches to a running system and watches it for leaked database connections: sessions left idle
in transaction, how long each held its connection, the query it was left after, PgBouncer's
waiting clients and the service's own pool. Shows a live status line once a second, and stops
cleanly on Ctrl-C or after --duration, leaving the samples, episodes and a summary in --out
(see probes/FORMAT.md). The probe only reads, on one connection, and never holds a transaction.

`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dsn, err := dsnFlag.Value()
	if err != nil {
		return err
	}
	if dsn == "" {
		return fmt.Errorf("%w: a PostgreSQL DSN is required (%s)", errUsage, dsnFlag.Sources())
	}
	pgbouncer, err := pgbouncerFlag.Value()
	if err != nil {
		return err
	}
	if pgbouncer == "" {
		pgbouncer = os.Getenv("LEAKBENCH_PROBE_PGBOUNCER") // the variable's older name
	}
	if *out == "" {
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	if *duration < 0 {
		return fmt.Errorf("%w: --duration %s is negative", errUsage, *duration)
	}
	mappings, err := readMappings(*mappingFile)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(*out)
	if err := rundir.Prepare(*out, *force); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	view := newLiveView(os.Stdout, os.Stderr)
	p, err := probes.Start(ctx, probes.Config{
		DSN: dsn, PgBouncerAdminDSN: pgbouncer, Database: *database, Interval: *interval, StuckAfter: *stuckAfter,
		RunDir: *out, Scrape: scrapes, Mappings: mappings, MetricsAddr: *metricsAddr, OnWarning: view.warn,
		KeepQueryText: *keepQueryText, ServerLogFile: *serverLog,
	})
	if err != nil {
		// Nothing was probed: leave no empty --out behind that looks like
		// a result (only a directory this command created, and only empty).
		if os.IsNotExist(statErr) {
			rundir.Discard(*out)
		}
		return err
	}
	cfg := p.Config()
	fmt.Fprintf(os.Stderr, "probing database %q every %s (stuck after %s, idle_in_transaction_session_timeout %s)",
		cfg.Database, cfg.Interval, cfg.StuckAfter, durationOrOff(p.IdleInTxTimeout()))
	if u := p.MetricsURL(); u != "" {
		fmt.Fprintf(os.Stderr, "; metrics at %s", u)
	}
	fmt.Fprintf(os.Stderr, "; writing to %s. Ctrl-C stops.\n", *out)

	var end <-chan time.Time
	if *duration > 0 {
		timer := time.NewTimer(*duration)
		defer timer.Stop()
		end = timer.C
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-tick.C:
			view.status(p.Status())
		}
	}
	view.done()
	sum, stopErr := p.Stop()
	if err := probes.WriteSummaryFile(filepath.Join(*out, rundir.ProbeSummaryFile), sum); err != nil {
		return errors.Join(stopErr, err)
	}
	printSummary(os.Stdout, sum, *out)
	return stopErr
}

// readMappings reads --mapping FILE.
func readMappings(path string) (map[string]poolmetrics.Mapping, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: read --mapping file: %v", errUsage, err)
	}
	var m map[string]poolmetrics.Mapping
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: --mapping %s: want a JSON object of mappings by name: %v", errUsage, path, err)
	}
	return m, nil
}

func durationOrOff(d time.Duration) string {
	if d == 0 {
		return "off"
	}
	return d.String()
}

// liveView prints the probe's status once a second: a status line redrawn
// in place on a terminal, plain lines otherwise. Warnings go to errw on
// lines of their own.
type liveView struct {
	mu    sync.Mutex
	out   io.Writer
	errw  io.Writer
	tty   bool
	width int
	drawn bool // a status line is on screen, not yet ended
}

func newLiveView(out, errw *os.File) *liveView {
	v := &liveView{out: out, errw: errw, width: 120}
	v.tty = tty.Is(out)
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		v.width = n
	}
	return v
}

func (v *liveView) status(st probes.Status) {
	line := statusLine(st)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.tty {
		fmt.Fprintln(v.out, line)
		return
	}
	if r := []rune(line); len(r) > v.width-1 {
		line = string(r[:v.width-2]) + "…"
	}
	fmt.Fprintf(v.out, "\r\x1b[K%s", line)
	v.drawn = true
}

// warn is the probe's OnWarning: it never blocks for long.
func (v *liveView) warn(w probes.Warning) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endLine()
	msg := w.Message
	if w.Recovered {
		msg = "working again"
	}
	fmt.Fprintf(v.errw, "%s warning: %s: %s\n", w.Last.Local().Format("15:04:05"), w.Source, redact.String(msg))
}

func (v *liveView) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endLine()
}

func (v *liveView) endLine() {
	if v.drawn {
		fmt.Fprintln(v.out)
		v.drawn = false
	}
}

// statusLine is one look at the probe: stuck sessions, the oldest episode
// and its query, pool waiters, the service's pool.
func statusLine(st probes.Status) string {
	s := st.Sample
	var b strings.Builder
	fmt.Fprintf(&b, "%s  ", s.Time.Local().Format("15:04:05"))
	if s.Gap {
		fmt.Fprintf(&b, "postgres: no sample (%s)", firstError(s.Error))
	} else {
		fmt.Fprintf(&b, "stuck %d  idle-in-tx %d  active %d  idle %d", s.StuckIdleInTx, s.States.IdleInTx+s.States.IdleInTxAborted, s.States.Active, s.States.Idle)
	}
	fmt.Fprintf(&b, "  episodes %d (stuck %d)", st.Episodes, st.StuckEpisodes)
	if p := s.PgBouncer; p != nil {
		fmt.Fprintf(&b, "  | pgbouncer waiting %d maxwait %.1fs", p.ClWaiting, p.MaxWaitSeconds)
	}
	if a := st.AppPool; a != nil {
		fmt.Fprintf(&b, "  | app pool %g/%g acquired, %g waits", a.Acquired, a.Max, a.AcquireWaitsTotal)
	}
	if o := s.OldestIdleInTx; o != nil {
		fmt.Fprintf(&b, "  | oldest %.1fs pid %d %s: %s", o.AgeSeconds, o.PID, o.ApplicationName, o.Fingerprint)
	}
	return b.String()
}

func firstError(e string) string {
	first, _, _ := strings.Cut(e, "; ")
	return first
}

func printSummary(w io.Writer, s *probes.Summary, dir string) {
	fmt.Fprintf(w, "\n%d samples (%d gaps), %d episodes: %d stuck, %d killed by the timeout; longest hold %.2fs, release p50 %.3fs p99 %.3fs\n",
		s.Samples, s.GapSamples, s.Episodes, s.StuckEpisodes, s.TimeoutTerminated, s.LongestHoldSeconds, s.ReleaseP50Seconds, s.ReleaseP99Seconds)
	if s.PgBouncerSampled {
		fmt.Fprintf(w, "PgBouncer: at most %d clients waiting, longest wait %.2fs, exhausted for %.1fs\n",
			s.PgBouncerMaxClWaiting, s.PgBouncerMaxWaitSeconds, s.PoolExhaustedSeconds)
	}
	if s.AppPoolSampled {
		fmt.Fprintf(w, "Service pool: at most %g of %g acquired, saturated for %.1fs, %g acquires waited\n",
			s.AppPoolMaxAcquired, s.AppPoolMax, s.AppPoolSaturatedSeconds, s.AppPoolAcquireWaits)
	}
	for i, c := range s.Culprits {
		if i == 3 {
			break
		}
		fmt.Fprintf(w, "culprit %d: %d episodes, %.1fs held in all (max %.1fs), %s: %s\n", i+1, c.Episodes, c.TotalHoldSeconds, c.MaxHoldSeconds, c.ApplicationName, c.Fingerprint)
	}
	for _, x := range s.Warnings {
		fmt.Fprintf(w, "warning (%d×): %s: %s\n", x.Count, x.Source, redact.String(x.Message))
	}
	fmt.Fprintf(w, "Written: %s, %s, %s in %s\n", rundir.SamplesFile, rundir.EpisodesFile, rundir.ProbeSummaryFile, dir)
}
