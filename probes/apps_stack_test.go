package probes

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leakbench/leakbench/internal/lib/pgappname"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// TestBackendsByApplication: each sample groups the database's client
// backends by application_name, and those that set none by their client
// address, with their states and the latest state change — the service's
// pool as the database sees it. The probe's own session is not counted,
// nor one of leakbench's checks before a run (pgappname.Preflight).
func TestBackendsByApplication(t *testing.T) {
	// Parallel: it waits for the probe to see backends; its one clock check allows seconds.
	t.Parallel()
	env := startStack(t, stack.Config{NoGateway: true, IdleInTxTimeout: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(app string) *pgx.Conn {
		cfg, err := pgx.ParseConfig(env.PostgresDSN)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Database = env.Database
		cfg.RuntimeParams["application_name"] = app
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	// svc: one idle, two idle in transaction; one client with no name.
	open("svc")
	for range 2 {
		c := open("svc")
		if _, err := c.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	open("")
	// leakbench's own check before a run, not yet gone: not a client.
	open(pgappname.Preflight)
	changed := time.Now()
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	deadline := time.Now().Add(10 * time.Second)
	var s rundir.Sample
	for time.Now().Before(deadline) {
		if s = p.Snapshot(); len(s.Apps) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	byName := map[string]rundir.AppConns{}
	for _, a := range s.Apps {
		byName[a.Name] = a
	}
	svc, ok := byName["svc"]
	if !ok || svc.ByAddress || svc.Total() != 3 || svc.Idle != 1 || svc.IdleInTx != 2 || svc.Active != 0 {
		t.Errorf("svc: %+v (ok %v); want 3 backends, 1 idle, 2 idle in transaction, by name", svc, ok)
	}
	if d := svc.LastStateChange.Sub(changed); d > 2*time.Second || d < -10*time.Second {
		t.Errorf("svc's latest state change %s is not when its transactions went idle (%s)", svc.LastStateChange, changed)
	}
	var anon *rundir.AppConns
	for _, a := range s.Apps {
		if a.ByAddress {
			anon = &a
		}
	}
	if anon == nil || anon.Total() != 1 || anon.Name == "" {
		t.Errorf("the client without application_name: %+v; want one backend grouped by its address (%+v)", anon, s.Apps)
	}
	// The same on /metrics.
	mfs, err := p.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, mf := range mfs {
		if mf.GetName() != "leakbench_probe_application_backends" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["application"] == "svc" && labels["state"] == "idle in transaction" {
				seen = m.GetGauge().GetValue() == 2
			}
		}
	}
	if !seen {
		t.Errorf("/metrics has no leakbench_probe_application_backends{application=\"svc\",state=\"idle in transaction\"} 2")
	}
	if _, ok := byName[probeApplicationName]; ok {
		t.Errorf("the probe counted its own session: %+v", s.Apps)
	}
	if _, ok := byName[pgappname.Preflight]; ok {
		t.Errorf("the probe counted leakbench's preflight session: %+v", s.Apps)
	}
	if n := s.States.Idle + s.States.IdleInTx + s.States.Active + s.States.Other; n != 4 {
		t.Errorf("states %+v: %d client backends, want the 4 of svc and the unnamed client", s.States, n)
	}
}

func TestParseApps(t *testing.T) {
	apps, err := parseApps(`[["svc", false, 1, 2, 3, 0, 0, "2026-12-01T10:00:00.123456Z"], ["10.0.0.1", true, 0, 1, 0, 0, 0, null]]`)
	if err != nil || len(apps) != 2 || apps[0].Total() != 6 || apps[0].LastStateChange.Nanosecond() != 123456000 || !apps[1].ByAddress || !apps[1].LastStateChange.IsZero() {
		t.Errorf("parseApps: %+v, %v", apps, err)
	}
	for _, bad := range []string{`{`, `[["svc", false]]`, `[["svc", false, "x", 0, 0, 0, 0, null]]`, `[["svc", false, 1, 0, 0, 0, 0, "yesterday"]]`} {
		if _, err := parseApps(bad); err == nil {
			t.Errorf("parseApps(%s): no error", bad)
		}
	}
}
