package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// urlWriter is a command's stderr that hands over the dashboard's URL
// from the line the command prints ("dashboard: http://…/").
type urlWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	url  chan string // buffered: the URL is sent once, never blocking the command
	sent bool
}

func (w *urlWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	for line := range strings.Lines(w.buf.String()) {
		// Only a whole line: a write may end in the middle of the URL.
		if !strings.HasSuffix(line, "\n") {
			break
		}
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "dashboard: http"); ok && !w.sent {
			// The channel field itself never changes: the test reads it
			// without the lock, perhaps after this write (it was once
			// set to nil here, and a test that selected late waited on
			// a nil channel until the command ended).
			w.url <- "http" + u
			w.sent = true
		}
	}
	return len(b), nil
}

// watched is what a page saw of a command: every point and the last
// state, from the history and the stream until the command was done.
type watched struct {
	points []dashboard.Point
	states []dashboard.State
}

// watchCommand runs the command in-process with --dashboard=127.0.0.1:0,
// opens its page's stream as soon as it prints the URL, and returns what
// the stream carried and the command's error.
func watchCommand(t *testing.T, cmd func(context.Context, *cli, []string) error, args ...string) (*watched, error) {
	t.Helper()
	stderr := &urlWriter{url: make(chan string, 1)}
	c := newCLI(os.Stdout, stderr, func(string) string { return "" }) // as isolatedCLI's
	done := make(chan error, 1)
	go func() { done <- cmd(context.Background(), c, append(args, "--dashboard=127.0.0.1:0")) }()
	var url string
	select {
	case url = <-stderr.url:
	case err := <-done:
		t.Fatalf("the command ended before it printed the dashboard's URL: %v\n%s", err, stderr.buf.String())
	}
	resp, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	w := &watched{}
	if err := dashboard.ReadEvents(resp.Body, func(ev dashboard.Event) bool {
		w.points = append(w.points, ev.Points...)
		if ev.State != nil {
			w.states = append(w.states, *ev.State)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return w, <-done
}

// last is the last state the page got.
func (w *watched) last(t *testing.T) dashboard.State {
	t.Helper()
	if len(w.states) == 0 || w.states[len(w.states)-1].View == nil {
		t.Fatalf("the page got no state with a view (%d states)", len(w.states))
	}
	return w.states[len(w.states)-1]
}

func dashScenario(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSignoffDashboardSides: signoff --dashboard on two running builds:
// the page's points carry both sides, and its panel has both sides'
// load.
func TestSignoffDashboardSides(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	before, after := mcptest.Start(t, mcptest.Options{}).URL, mcptest.Start(t, mcptest.Options{}).URL
	scen := dashScenario(t, "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 2500ms, flow: [{tools/call: {name: echo, arguments: {text: x}}}, think: 20ms]}\n")
	w, err := watchCommand(t, cmdSignoff, "--before-target", before, "--after-target", after, "--mode", "regression",
		"--scenario", scen, "--out", filepath.Join(t.TempDir(), "out"))
	if err != nil && !errors.Is(err, errVerdict) {
		t.Fatalf("signoff: %v", err)
	}
	parts := map[string]int{}
	for _, p := range w.points {
		if p.Load != nil && p.Load.Requests > 0 {
			parts[p.Part]++
		}
	}
	if parts["before"] == 0 || parts["after"] == 0 {
		t.Errorf("points with load by side: %v; want both before and after", parts)
	}
	v := w.last(t).View
	if v.Command != "signoff" || len(v.Sides) != 2 || v.Sides[0].Name != "before" || v.Sides[1].Name != "after" ||
		v.Sides[0].Requests == 0 || v.Sides[1].Requests == 0 {
		t.Errorf("panel %+v: want the two sides with their requests", v)
	}
}

// TestCapacityDashboardStages: capacity --dashboard on a running
// service: each stage plays as a part of the page, and the stage curve
// has every stage the search judged.
func TestCapacityDashboardStages(t *testing.T) {
	t.Parallel() // isolatedCLI: the machine's LEAKBENCH_ variables do not reach it
	target := mcptest.Start(t, mcptest.Options{}).URL
	scen := dashScenario(t, `capacity: {load: users, start: 2, max: 4, factor: 2, stage: 4s, resolution: 1, max_stages: 3, error_rate: 0.05, generator: off}
scenarios:
  s: {executor: constant-vus, vus: 1, duration: 4s, gracefulStop: 1s, flow: [{think: 50ms}, {tools/call: {name: echo}}]}
`)
	w, err := watchCommand(t, cmdCapacity, "--target", target, "--scenario", scen, "--out", filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Logf("capacity: %v (the search's verdict; the page is what is tested)", err)
	}
	v := w.last(t).View
	if v.Command != "capacity" || len(v.Searches) != 1 {
		t.Fatalf("panel %+v: want one search", v)
	}
	s := v.Searches[0]
	if len(s.Stages) < 2 || s.Outcome == "" || s.Headline == "" {
		t.Errorf("search %+v: want its stages and its outcome", s)
	}
	parts := map[string]bool{}
	for _, p := range w.points {
		parts[p.Part] = true
	}
	for _, st := range s.Stages {
		if name := fmt.Sprintf("%s stage %d", s.Name, st.Index); !parts[name] || st.ReqPerSecond == 0 {
			t.Errorf("stage %d: %+v; its run a part of the page: %v", st.Index, st, parts[name])
		}
	}
	// The curve grew a stage at a time: some state had fewer stages.
	grew := false
	for _, st := range w.states {
		if st.View != nil && len(st.View.Searches) == 1 && len(st.View.Searches[0].Stages) == 1 {
			grew = true
		}
	}
	if !grew {
		t.Error("no state had the first stage alone: the curve did not grow as the stages finished")
	}
}

// localPostgres starts PostgreSQL and PgBouncer on local processes, for
// the commands that probe.
func localPostgres(t *testing.T) *fixtures.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return fixturetest.StartLocal(t, ctx, stack.Config{NoGateway: true, Users: 1, IdleInTxTimeout: -1})
}

// TestProbeDashboardDatabase: probe --dashboard: the page shows the
// database it probes, and no load.
func TestProbeDashboardDatabase(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a local PostgreSQL")
	}
	env := localPostgres(t)
	w, err := watchCommand(t, cmdProbe, "--probe-dsn", env.ProbeDSN, "--duration", "3s", "--out", filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if w.last(t).View.Command != "probe" {
		t.Errorf("panel %+v", w.last(t).View)
	}
	db := 0
	for _, p := range w.points {
		if p.Load != nil {
			t.Fatalf("a probe's page has load: %+v", p.Load)
		}
		// The probe leaves its own connection out, and nothing else
		// uses this database: a sample of it is the point's DB figures.
		if p.DB != nil && !p.DB.SampleTime.IsZero() {
			db++
		}
	}
	if db == 0 {
		t.Errorf("no point had the database's sample (%d points)", len(w.points))
	}
}

// TestSoakDashboardSlopes: soak --dashboard on a running service with
// its database probed: the page goes through the soak's phases and
// shows the slopes fitted so far.
func TestSoakDashboardSlopes(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	if testing.Short() {
		t.Skip("integration test: a local PostgreSQL")
	}
	env := localPostgres(t)
	target := mcptest.Start(t, mcptest.Options{}).URL
	scen := dashScenario(t, "scenarios:\n  s: {executor: constant-vus, vus: 2, duration: 6s, flow: [{tools/call: {name: echo, arguments: {text: x}}}, think: 50ms]}\n")
	w, err := watchCommand(t, cmdSoak, "--target", target, "--probe-dsn", env.ProbeDSN, "--scenario", scen,
		"--baseline", "1s", "--warmup", "1s", "--cool-down", "2s", "--min-points", "2", "--out", filepath.Join(t.TempDir(), "out"))
	if err != nil && !errors.Is(err, errVerdict) {
		t.Fatalf("soak: %v", err)
	}
	phases := map[string]bool{}
	for _, st := range w.states {
		if st.View != nil && st.View.Soak != nil {
			phases[st.View.Soak.Phase] = true
		}
	}
	if !phases[dashboard.PhaseSteady] {
		t.Errorf("phases seen %v: want the steady window", phases)
	}
	sp := w.last(t).View.Soak
	found := false
	for _, s := range sp.Slopes {
		if s.Name == "idle in transaction" && s.Points >= 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("slopes %+v: want idle in transaction fitted over the steady window", sp.Slopes)
	}
}

// TestDashboardAddrInUse: every command that takes --dashboard refuses an
// address in use with an error naming it, before any load or probe (its
// --out is not written).
func TestDashboardAddrInUse(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	target := mcptest.Start(t, mcptest.Options{}).URL
	scen := dashScenario(t, `capacity: {load: users, start: 2, max: 4, stage: 4s}
scenarios:
  s: {executor: constant-vus, vus: 1, duration: 3s, flow: [{tools/call: {name: echo}}]}
`)
	// A probe DSN nothing listens on: the probe must not get as far as
	// trying it.
	dsn := "postgres://u@127.0.0.1:1/x?connect_timeout=1"
	for _, tc := range []struct {
		name string
		cmd  func(context.Context, *cli, []string) error
		args []string
	}{
		{"run", cmdRun, []string{"--target", target, "--scenario", scen}},
		{"signoff", cmdSignoff, []string{"--before-target", target, "--after-target", target + "/", "--mode", "regression", "--scenario", scen}},
		{"capacity", cmdCapacity, []string{"--target", target, "--scenario", scen}},
		{"soak", cmdSoak, []string{"--target", target, "--probe-dsn", dsn, "--scenario", scen}},
		{"probe", cmdProbe, []string{"--probe-dsn", dsn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			err := tc.cmd(context.Background(), testCLI(), append(tc.args, "--out", out, "--dashboard="+busy.Addr().String()))
			if !errors.Is(err, dashboard.ErrAddrInUse) || !errors.Is(err, cliflag.ErrUsage) || !strings.Contains(err.Error(), busy.Addr().String()) {
				t.Errorf("error %v: want %v (a usage error) naming %s", err, dashboard.ErrAddrInUse, busy.Addr())
			}
			if _, err := os.Stat(filepath.Join(out, "summary.json")); !os.IsNotExist(err) {
				t.Errorf("a run was written: %v", err)
			}
		})
	}
}
