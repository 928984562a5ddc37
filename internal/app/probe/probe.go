// Package probe is the standalone probe, `leakbench probe`: it attaches to
// a running PostgreSQL (and PgBouncer, and the service's own pool through
// its Prometheus metrics), watches it for leaked connections with the
// probes library's poller, shows a status line once a second, and on
// Ctrl-C or after a duration leaves the samples, the episodes and a
// summary in its output directory (probes/FORMAT.md).
//
//	s, err := probe.Start(ctx, probe.Options{DSN: dsn, Out: "out", Stdout: os.Stdout, Stderr: os.Stderr})
//	if err != nil { ... nothing was probed ... }
//	err = s.Watch(ctx, 10*time.Minute) // status lines; then stop, write and print the summary
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/probes/poolmetrics"
)

// Options configures one standalone probe.
type Options struct {
	// DSN reaches PostgreSQL directly (not through PgBouncer), as a role
	// with pg_monitor; required.
	DSN string
	// PgBouncerAdminDSN, if set, reaches PgBouncer's admin console.
	PgBouncerAdminDSN string
	// Database is the database to watch ("": the DSN's).
	Database string
	// Interval and StuckAfter: see probes.Config (zero: the defaults).
	Interval, StuckAfter time.Duration
	// Scrape are the service's pool endpoints, Mappings the pool mappings
	// they may name besides the built-in ones.
	Scrape   []poolmetrics.Target
	Mappings map[string]poolmetrics.Mapping
	// MetricsAddr, if set, serves the probe's own metrics at /metrics.
	MetricsAddr string
	// Out is the output directory, already prepared (rundir.Prepare).
	Out string
	// ServerLogFile is PostgreSQL's log as it is written (optional).
	ServerLogFile string
	// KeepQueryText keeps stuck sessions' raw query texts (sensitive).
	KeepQueryText bool
	// Stdout gets the status lines and the summary (a status line is
	// redrawn in place when Stdout is a terminal); Stderr gets the start
	// line and the warnings. Nil discards.
	Stdout, Stderr io.Writer
}

// Session is a probe that started: its poller runs until Watch returns.
type Session struct {
	p    *probes.Poller
	view *liveView
	out  string
}

// Start starts the poller and says on Stderr what it probes. On an error
// nothing was probed.
func Start(ctx context.Context, o Options) (*Session, error) {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	view := newLiveView(o.Stdout, o.Stderr)
	p, err := probes.Start(ctx, probes.Config{
		DSN: o.DSN, PgBouncerAdminDSN: o.PgBouncerAdminDSN, Database: o.Database, Interval: o.Interval, StuckAfter: o.StuckAfter,
		RunDir: o.Out, Scrape: o.Scrape, Mappings: o.Mappings, MetricsAddr: o.MetricsAddr, OnWarning: view.warn,
		KeepQueryText: o.KeepQueryText, ServerLogFile: o.ServerLogFile,
	})
	if err != nil {
		return nil, err
	}
	cfg := p.Config()
	fmt.Fprintf(o.Stderr, "probing database %q every %s (stuck after %s, idle_in_transaction_session_timeout %s)",
		cfg.Database, cfg.Interval, cfg.StuckAfter, durationOrOff(p.IdleInTxTimeout()))
	if u := p.MetricsURL(); u != "" {
		fmt.Fprintf(o.Stderr, "; metrics at %s", u)
	}
	fmt.Fprintf(o.Stderr, "; writing to %s. Ctrl-C stops.\n", o.Out)
	return &Session{p: p, view: view, out: o.Out}, nil
}

// Watch shows the probe's status once a second until ctx is done or, when
// d > 0, d has passed; then it stops the poller, writes the summary into
// the output directory and prints it.
func (s *Session) Watch(ctx context.Context, d time.Duration) error {
	var end <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
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
			s.view.status(s.p.Status())
		}
	}
	s.view.done()
	sum, stopErr := s.p.Stop()
	if err := probes.WriteSummaryFile(filepath.Join(s.out, rundir.ProbeSummaryFile), sum); err != nil {
		return errors.Join(stopErr, err)
	}
	printSummary(s.view.out, sum, s.out)
	return stopErr
}

// Status is the probe's latest view (probes.Poller.Status), safe from
// any goroutine until Watch returns: what the dashboard shows.
func (s *Session) Status() probes.Status { return s.p.Status() }

func durationOrOff(d time.Duration) string {
	if d == 0 {
		return "off"
	}
	return d.String()
}
