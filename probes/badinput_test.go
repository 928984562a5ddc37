package probes

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"go.uber.org/goleak"
)

// testBadInput: every kind of bad input is a clear error (PostgreSQL, the
// one source the probe insists on) or a warning with the fix (PgBouncer,
// scrape targets) while the other sources go on being sampled. No message
// carries a password.
func testBadInput(t *testing.T, ctx context.Context, env *fixtures.Env) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg, err := pgx.ParseConfig(env.ProbeDSN)
	if err != nil {
		t.Fatal(err)
	}
	const wrongPW = "not-the-secret-7"
	withPassword := func(dsn, pw string) string {
		u := mustURL(t, dsn)
		u.User = url.UserPassword(u.User.Username(), pw)
		return u.String()
	}
	withUser := func(dsn, from string) string {
		u, f := mustURL(t, dsn), mustURL(t, from)
		u.User = f.User
		return u.String()
	}
	withPath := func(dsn, db string) string {
		u := mustURL(t, dsn)
		u.Path = "/" + db
		return u.String()
	}
	gone := httptest.NewServer(http.NotFoundHandler()) // a loopback host:port nothing listens on any more
	gone.Close()
	closed := gone.Listener.Addr().String()
	noRoute := "postgres://leakbench_probe:" + wrongPW + "@" + closed + "/mcp?sslmode=disable"
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { // net/http sniffs it as text/html
		_, _ = io.WriteString(w, "<!doctype html><html><title>Grafana</title></html>")
	}))
	defer html.Close()
	adminPW, _ := mustURL(t, env.PgBouncerAdminDSN).User.Password()
	secrets := []string{wrongPW, cfg.Password, adminPW}

	cases := []struct {
		name      string
		cfg       Config
		wantErr   string // Start fails with this
		errConfig bool   // … wrapping ErrConfig
		warnFrom  string // or Start works and this source warns
		warn      string // … with this
	}{
		{name: "DSN that does not parse", cfg: Config{DSN: "postgres://a:" + wrongPW + "@[::1/mcp"},
			wantErr: "postgres DSN is not a valid connection string or URL", errConfig: true},
		{name: "wrong password", cfg: Config{DSN: withPassword(env.ProbeDSN, wrongPW)},
			wantErr: "wrong password for user leakbench_probe: check the password in the DSN"},
		{name: "no route: nothing listening", cfg: Config{DSN: noRoute},
			wantErr: "nothing is listening at " + closed + ": is the server running, and is that its port?"},
		{name: "database that does not exist", cfg: Config{DSN: withPath(env.ProbeDSN, "nosuchdb")},
			wantErr: "names a database that does not exist"},
		{name: "database to watch that does not exist", cfg: Config{DSN: env.ProbeDSN, Database: "nosuchdb"},
			wantErr: `database "nosuchdb" does not exist on this server`, errConfig: true},
		{name: "role without pg_monitor", cfg: Config{DSN: withUser(env.ProbeDSN, env.AppDSN)},
			wantErr: `role "mcp_app" cannot see other roles' sessions: grant it pg_monitor (GRANT pg_monitor TO "mcp_app";)`, errConfig: true},
		{name: "PostgreSQL DSN through PgBouncer", cfg: Config{DSN: env.AppDSN},
			wantErr: "must reach PostgreSQL directly, not through PgBouncer", errConfig: true},
		{name: "PgBouncer console refuses the user", cfg: Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: withPath(env.AppDSN, "pgbouncer")},
			warnFrom: "pgbouncer", warn: "PgBouncer's admin console refused user mcp_app: add it to stats_users"},
		{name: "PgBouncer wrong password", cfg: Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: withPassword(env.PgBouncerAdminDSN, wrongPW)},
			warnFrom: "pgbouncer", warn: "wrong password for user pgbouncer_admin"},
		{name: "PgBouncer DSN that reaches PostgreSQL", cfg: Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.ProbeDSN},
			warnFrom: "pgbouncer", warn: `not PgBouncer's admin console: use PgBouncer's port and the database "pgbouncer"`},
		{name: "PgBouncer not listening", cfg: Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: "postgres://admin:" + wrongPW + "@" + closed + "/pgbouncer"},
			warnFrom: "pgbouncer", warn: "nothing is listening at " + closed},
		{name: "scrape URL returns HTML", cfg: Config{DSN: env.ProbeDSN, Scrape: []poolmetrics.Target{{URL: html.URL + "/d/pool"}}},
			warnFrom: "scrape " + html.URL + "/d/pool", warn: "returned an HTML page, not Prometheus metrics: point the scrape at the service's metrics endpoint (usually /metrics)"},
		{name: "scrape URL not listening", cfg: Config{DSN: env.ProbeDSN, Scrape: []poolmetrics.Target{{URL: "http://" + closed + "/metrics"}}},
			warnFrom: "scrape http://" + closed + "/metrics", warn: "nothing is listening there"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var warned []rundir.Warning
			c.cfg.OnWarning = func(w rundir.Warning) { mu.Lock(); warned = append(warned, w); mu.Unlock() }
			p, err := Start(ctx, c.cfg)
			if c.wantErr != "" {
				if err == nil {
					p.Stop()
					t.Fatalf("Start worked; want an error containing %q", c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantErr) || errors.Is(err, ErrConfig) != c.errConfig {
					t.Errorf("error %q; want one containing %q (ErrConfig: %v)", err, c.wantErr, c.errConfig)
				}
				noSecrets(t, err.Error(), secrets)
				return
			}
			if err != nil {
				t.Fatalf("Start: %v; want a warning only", err)
			}
			defer p.Stop()
			waitFor(t, 5*time.Second, "a warning", func() bool { mu.Lock(); defer mu.Unlock(); return len(warned) > 0 })
			waitFor(t, 2*time.Second, "a sample", func() bool { return !p.Snapshot().Time.IsZero() })
			if s := p.Snapshot(); s.Gap || s.Database == nil && s.States == (rundir.StateCounts{}) && s.Error == "" {
				t.Errorf("sample %+v: want PostgreSQL sampled despite the warning", s)
			}
			sum, err := p.Stop()
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			w := warned[0]
			mu.Unlock()
			if w.Source != c.warnFrom || !strings.Contains(w.Message, c.warn) {
				t.Errorf("warning %+v; want from %q containing %q", w, c.warnFrom, c.warn)
			}
			if len(sum.Warnings) != 1 || sum.Warnings[0].Message != w.Message || sum.GapSamples != 0 || sum.Samples == 0 {
				t.Errorf("summary: warnings %+v, %d samples, %d gaps; want the one warning, samples, no gaps", sum.Warnings, sum.Samples, sum.GapSamples)
			}
			noSecrets(t, w.Message, secrets)
		})
	}
}

func noSecrets(t *testing.T, s string, secrets []string) {
	t.Helper()
	for _, x := range secrets {
		if x != "" && strings.Contains(s, x) {
			t.Errorf("%q contains a password", s)
		}
	}
}
