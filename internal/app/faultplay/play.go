package faultplay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/faults"
)

// Player plays a profile's faults: timeline against a stack while the
// load runs: each fault applied at its time and removed when it is over —
// or when the run's context is cancelled (Ctrl-C), or at stop — and after
// its removal the probe's samples watched until the pool is healthy again.
type Player struct {
	env    *fixtures.Env
	poller *probes.Poller
	every  time.Duration // how often recovery is checked: the probe's interval
	// settle is how long the pool must stay healthy to count as recovered:
	// the probe's stuck_after, so that a session leaked just before (not
	// stuck yet) would have shown as stuck within it.
	settle time.Duration
	log    func(format string, args ...any)
	start  time.Time

	mu   sync.Mutex
	recs []rundir.FaultRecord

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Options are what a timeline plays against, and how.
type Options struct {
	Env    *fixtures.Env  // the stack: its links' proxies, PgBouncer's console, the superuser DSN
	Poller *probes.Poller // the probe's samples, watched for recovery
	Every  time.Duration  // how often recovery is checked: the probe's interval
	Settle time.Duration  // how long the pool must stay healthy to count as recovered: the probe's stuck_after
	Log    io.Writer      // one line per fault applied, removed, recovered
	Name   string         // the run's name, on each log line
}

// Start starts playing specs from now (the load's start); nil when there
// are none.
func Start(ctx context.Context, specs []faults.Spec, o Options) *Player {
	if len(specs) == 0 {
		return nil
	}
	env, poller, logw, name := o.Env, o.Poller, o.Log, o.Name
	ctx, cancel := context.WithCancel(ctx)
	fp := &Player{env: env, poller: poller, every: o.Every, settle: o.Settle, start: time.Now(), cancel: cancel,
		log: func(format string, args ...any) {
			fmt.Fprintf(logw, "[%s] fault: %s\n", name, fmt.Sprintf(format, args...))
		}}
	fp.recs = make([]rundir.FaultRecord, len(specs))
	for i, s := range specs {
		fp.recs[i] = rundir.FaultRecord{Name: s.Name(), Link: s.Link, Toxic: s.Toxic, Action: s.Action,
			AtSeconds: s.At.Seconds(), ForSeconds: s.For.Seconds()}
		fp.wg.Add(1)
		go func() {
			defer fp.wg.Done()
			fp.play(ctx, i, s)
		}()
	}
	return fp
}

// Stop removes whatever is still applied and ends the recovery watches;
// the records, with the errors per fault counted from the run directory's
// request index, go into sum.Faults and the recovery thresholds (a
// profile's recovery_seconds) into the load's thresholds. Safe on nil.
func (fp *Player) Stop(dir string, recovery []string, sum *rundir.Summary) {
	if fp == nil {
		return
	}
	fp.cancel()
	fp.wg.Wait()
	if err := countErrors(filepath.Join(dir, rundir.RequestsFile), fp.recs); err != nil {
		fp.log("%v; the faults' error counts are those of the requests before it", err)
	}
	sum.Faults = fp.recs
	if sum.Load != nil {
		sum.Load.Thresholds = append(sum.Load.Thresholds, judgeRecovery(recovery, fp.recs, time.Now())...)
	}
}

func (fp *Player) update(i int, f func(r *rundir.FaultRecord)) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	f(&fp.recs[i])
}

// play applies fault i at its time, removes it at its end (or on
// cancellation: a fault never outlives the run), then watches recovery.
func (fp *Player) play(ctx context.Context, i int, s faults.Spec) {
	if !sleepUntil(ctx, fp.start.Add(s.At)) {
		return
	}
	name := fmt.Sprintf("fault%d", i)
	remove, killed, err := fp.apply(ctx, name, s)
	now := time.Now().UTC()
	fp.update(i, func(r *rundir.FaultRecord) {
		r.SessionsKilled = killed
		if err != nil {
			r.Error = redact.String(err.Error())
			return
		}
		r.Applied = &now
	})
	if err != nil {
		fp.log("%s at %s: %v", s.Name(), s.At, redact.String(err.Error()))
		return
	}
	if s.Action == faults.ActionTerminateBackends {
		fp.log("%s at %s: %d backends terminated", s.Name(), s.At, killed)
	} else {
		fp.log("%s applied at %s", s.Name(), s.At)
	}
	if remove != nil {
		sleepUntil(ctx, fp.start.Add(s.End()))
		rerr := remove()
		now := time.Now().UTC()
		fp.update(i, func(r *rundir.FaultRecord) {
			r.Removed = &now
			if rerr != nil {
				r.Error = redact.String(rerr.Error())
			}
		})
		fp.log("%s removed at %s", s.Name(), now.Sub(fp.start).Round(time.Millisecond))
	} else {
		fp.update(i, func(r *rundir.FaultRecord) { r.Removed = r.Applied })
	}
	fp.watchRecovery(ctx, i)
}

// watchRecovery waits, after fault i's removal, for the pool to be healthy
// in every sample for fp.settle (and at least two samples); the recovery
// time is from the removal to the first of them.
func (fp *Player) watchRecovery(ctx context.Context, i int) {
	fp.mu.Lock()
	removed, name := *fp.recs[i].Removed, fp.recs[i].Name
	fp.mu.Unlock()
	t := time.NewTicker(fp.every)
	defer t.Stop()
	var first time.Time
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s := fp.poller.Snapshot()
		if !s.Time.After(removed) || !s.Time.After(last) {
			continue
		}
		last = s.Time
		if !healthy(s) {
			first = time.Time{}
			continue
		}
		if first.IsZero() {
			first = s.Time
		}
		if s.Time == first || s.Time.Sub(first) < fp.settle {
			continue
		}
		secs := math.Max(0, first.Sub(removed).Seconds())
		fp.update(i, func(r *rundir.FaultRecord) { r.Recovered, r.RecoverySeconds = true, &secs })
		fp.log("%s: recovered %.1fs after its removal", name, secs)
		return
	}
}

// healthy: a sample with no stuck session, no PgBouncer client waiting and
// the service's pool below its max (what the probe could read).
func healthy(s rundir.Sample) bool {
	if s.Error != "" || s.Gap || s.StuckIdleInTx > 0 {
		return false
	}
	if s.PgBouncer != nil && s.PgBouncer.ClWaiting > 0 {
		return false
	}
	if s.AppPool != nil && s.AppPool.Max > 0 && s.AppPool.Acquired >= s.AppPool.Max {
		return false
	}
	return true
}

// apply applies s; remove (nil for an instant action) takes it off, on a
// context of its own so that it works after cancellation.
func (fp *Player) apply(ctx context.Context, name string, s faults.Spec) (remove func() error, killed int, err error) {
	switch s.Action {
	case "":
		if err := fp.env.Faults.AddToxic(name, s); err != nil {
			return nil, 0, err
		}
		return func() error { return fp.env.Faults.RemoveToxic(s.Link, name) }, 0, nil
	case faults.ActionPgBouncerReload:
		return nil, 0, adminCommand(ctx, fp.env.PgBouncerAdminDSN, "RELOAD")
	case faults.ActionPgBouncerPause:
		// PAUSE returns only once every server connection is released —
		// never while a leaked transaction holds one — so it is sent
		// without waiting; RESUME, on a connection of its own, ends it.
		// The console ignores cancel requests: the PAUSE connection's
		// socket is closed to end its wait.
		conn, err := adminConn(ctx, fp.env.PgBouncerAdminDSN)
		if err != nil {
			return nil, 0, fmt.Errorf("PAUSE: %w", err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := conn.Exec(context.Background(), "PAUSE")
			done <- err
		}()
		finished := false // PAUSE has returned
		select {
		case err := <-done:
			finished = true
			if err != nil {
				_ = conn.PgConn().Conn().Close()
				return nil, 0, fmt.Errorf("PgBouncer PAUSE: %w", err)
			}
		case <-time.After(200 * time.Millisecond): // pausing: clients wait from now on
		}
		return func() error {
			rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer rcancel()
			err := adminCommand(rctx, fp.env.PgBouncerAdminDSN, "RESUME")
			_ = conn.PgConn().Conn().Close()
			if !finished {
				<-done
			}
			return err
		}, 0, nil
	case faults.ActionPgBouncerKill:
		if err := adminCommand(ctx, fp.env.PgBouncerAdminDSN, "KILL "+pgx.Identifier{fp.env.Database}.Sanitize()); err != nil {
			return nil, 0, err
		}
		return func() error {
			rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer rcancel()
			return adminCommand(rctx, fp.env.PgBouncerAdminDSN, "RESUME "+pgx.Identifier{fp.env.Database}.Sanitize())
		}, 0, nil
	case faults.ActionTerminateBackends:
		n, err := terminateBackends(ctx, fp.env.PostgresDSN, fp.env.Database, s)
		return nil, n, err
	case faults.ActionPostgresRestart, faults.ActionPgBouncerRestart:
		server := s.Server()
		killed := 0
		if server == fixtures.ServerPostgres {
			// What the shutdown is about to end: the service's backends.
			killed, _ = countBackends(ctx, fp.env.PostgresDSN, fp.env.Database, s)
		}
		if err := fp.env.StopServer(server); err != nil {
			return nil, 0, err
		}
		return func() error {
			rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
			defer rcancel()
			return fp.env.StartServer(rctx, server)
		}, killed, nil
	}
	return nil, 0, fmt.Errorf("unknown action %q", s.Action)
}

// adminCommand sends one command to PgBouncer's admin console (simple
// protocol, as it requires).
func adminCommand(ctx context.Context, dsn, cmd string) error {
	conn, err := adminConn(ctx, dsn)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, cmd); err != nil {
		return fmt.Errorf("PgBouncer %s: %w", cmd, err)
	}
	return nil
}

// adminConn connects to PgBouncer's admin console.
func adminConn(ctx context.Context, dsn string) (*pgx.Conn, error) {
	if dsn == "" {
		return nil, fmt.Errorf("the stack has no PgBouncer admin console")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PgBouncer's console: %w", err)
	}
	return conn, nil
}

const sqlTerminate = `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM (
	SELECT pid FROM pg_stat_activity
	WHERE datname = $1 AND application_name = $2 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
	ORDER BY random() LIMIT $3) victims`

const sqlCountBackends = `SELECT count(*) FROM pg_stat_activity
	WHERE datname = $1 AND application_name = $2 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`

// terminateBackends runs pg_terminate_backend on s.Count (or s.Fraction,
// rounded up; neither: all) of the backends of s.ApplicationName (default:
// the reference gateway's, mcp-gateway) in the application database.
func terminateBackends(ctx context.Context, dsn, db string, s faults.Spec) (int, error) {
	if dsn == "" {
		return 0, fmt.Errorf("terminate_backends: the stack gives no superuser DSN")
	}
	app := serviceApp(s)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("terminate_backends: connect: %w", err)
	}
	defer conn.Close(context.Background())
	limit := int64(s.Count)
	if s.Count == 0 {
		var n int64
		if err := conn.QueryRow(cctx, sqlCountBackends, db, serviceApp(s)).Scan(&n); err != nil {
			return 0, fmt.Errorf("terminate_backends: count: %w", err)
		}
		limit = n
		if s.Fraction > 0 {
			limit = int64(math.Ceil(float64(n) * s.Fraction))
		}
	}
	var killed int
	if err := conn.QueryRow(cctx, sqlTerminate, db, app, limit).Scan(&killed); err != nil {
		return 0, fmt.Errorf("terminate_backends: %w", err)
	}
	return killed, nil
}

// serviceApp is the application_name of the service's backends a fault
// counts or terminates: s.ApplicationName, default the reference
// gateway's.
func serviceApp(s faults.Spec) string {
	if s.ApplicationName != "" {
		return s.ApplicationName
	}
	return "mcp-gateway"
}

// countBackends counts the service's backends in the application database.
func countBackends(ctx context.Context, dsn, db string, s faults.Spec) (int, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("count backends: connect: %w", err)
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(cctx, sqlCountBackends, db, serviceApp(s)).Scan(&n)
	return n, err
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// countErrors counts the failed requests of requests.jsonl per fault:
// those started while it was on, and from its removal until it recovered
// (or the end of the run). A missing index counts nothing; one that cannot
// be read to its end (a line past jsonl.MaxLine) is an error, the counts
// then those of the lines before it. A line cut short by a kill is
// skipped.
func countErrors(path string, recs []rundir.FaultRecord) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("count the errors per fault: %w", err)
	}
	defer f.Close()
	_, err = jsonl.Each(f, -1, func(r *rundir.Request) {
		if r.Outcome == rundir.RequestOK {
			return
		}
		for i := range recs {
			fr := &recs[i]
			if fr.Applied == nil || fr.Removed == nil {
				continue
			}
			switch {
			case !r.Start.Before(*fr.Applied) && r.Start.Before(*fr.Removed):
				fr.ErrorsDuring++
			case !r.Start.Before(*fr.Removed) && (fr.RecoverySeconds == nil ||
				r.Start.Before(fr.Removed.Add(time.Duration(*fr.RecoverySeconds*float64(time.Second))))):
				fr.ErrorsAfter++
			}
		}
	})
	if err != nil {
		return fmt.Errorf("count the errors per fault in %s: %w", path, err)
	}
	return nil
}

// judgeRecovery judges the recovery thresholds on the faults' recovery
// times; a fault that never recovered counts as the time from its removal
// to now and fails every threshold.
func judgeRecovery(exprs []string, recs []rundir.FaultRecord, now time.Time) []rundir.Threshold {
	var vals []float64
	allRecovered := true
	for _, r := range recs {
		switch {
		case r.RecoverySeconds != nil:
			vals = append(vals, *r.RecoverySeconds)
		case r.Removed != nil:
			vals = append(vals, now.Sub(*r.Removed).Seconds())
			allRecovered = false
		}
	}
	var out []rundir.Threshold
	for _, e := range exprs {
		t, err := faults.ParseRecoveryThreshold(e)
		if err != nil {
			continue // checked when the profile was read
		}
		obs := math.NaN()
		if len(vals) > 0 {
			obs = t.Observe(vals)
		}
		out = append(out, rundir.Threshold{Metric: "recovery_seconds", Expression: e, Observed: obs,
			Pass: len(vals) > 0 && allRecovered && t.Holds(obs), Samples: int64(len(vals))})
	}
	return out
}
