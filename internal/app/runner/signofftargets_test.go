package runner

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/examples/pyservice"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// build is one running build of the Python service, on a database of its
// own (so that each build's probe sees only its own connections, through
// its own probe DSN, as two deployments would).
type build struct {
	svc *pyservice.Service
	ext fixtures.External
}

// startBuilds starts the Python service's variants side by side on one
// local PostgreSQL, each on its own database (named after prefix: the
// package's tests share one cluster) and port.
func startBuilds(t *testing.T, prefix string, variants ...string) []build {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: PostgreSQL and the Python service under load")
	}
	if _, err := pyservice.Check(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env := fixturetest.StartLocal(t, ctx, stack.Config{NoGateway: true, Users: 1, IdleInTxTimeout: -1})
	var out []build
	for i, v := range variants {
		name := prefix + "_build" + string(rune('a'+i))
		db, err := pyservice.SeedDatabase(ctx, env.PostgresDSN, env.ProbeDSN, name, 30)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := pyservice.Start(context.Background(), pyservice.Options{DSN: db.DSN, Variant: v, PoolSize: 10, PoolTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := svc.Close(); err != nil {
				t.Error(err)
			}
		})
		out = append(out, build{svc: svc, ext: fixtures.External{GatewayURL: svc.URL, ProbeDSN: db.ProbeDSN, Tokens: db.Tokens}})
	}
	return out
}

// signoffBuilds signs off before against after into out, as `leakbench
// signoff --before-target … --after-target … --mode MODE` does.
func signoffBuilds(t *testing.T, out string, before, after build, mode verdict.Mode) (string, *reports.Comparison) {
	t.Helper()
	p, err := profiles.Parse([]byte(ownServiceProfile), "own.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmp, err := Signoff(ctx, SignoffOptions{Profile: p, Out: out, Version: "test", Mode: mode,
		Before: &SignoffTarget{External: before.ext, Name: before.svc.Variant}, After: &SignoffTarget{External: after.ext, Name: after.svc.Variant}})
	if err != nil {
		t.Fatalf("signoff %s → %s (%s): %v", before.svc.Variant, after.svc.Variant, mode, err)
	}
	return out, cmp
}

func headline(t *testing.T, dir string) string {
	t.Helper()
	h, _, _ := strings.Cut(string(readFileT(t, filepath.Join(dir, rundir.ReportFile))), "\n")
	return h
}

// TestSignoffTwoBuilds signs off the user's own running builds — the
// Python service's leaky and fixed variants, two for each sign-off, each on
// its own port and database — in both modes, and judges runs against a stored
// baseline as run --baseline does: fix passes leaky → fixed and fails
// fixed → leaky; regression passes fixed → fixed and fails fixed → leaky,
// naming what regressed.
func TestSignoffTwoBuilds(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	// The three sign-offs side by side, each on builds of its own: a
	// build shared by two sign-offs at once would show each the other's
	// load and sessions. Their run directories are the parent's, read by
	// the run --baseline checks after them.
	dir := t.TempDir()
	fixOut, regOut, okOut := filepath.Join(dir, "fix"), filepath.Join(dir, "regression"), filepath.Join(dir, "same")
	t.Run("sign-offs", func(t *testing.T) {
		t.Run("fix, leaky to fixed", func(t *testing.T) {
			t.Parallel()
			b := startBuilds(t, "fix", pyservice.HeldWhileWaiting, pyservice.Fixed)
			_, cmp := signoffBuilds(t, fixOut, b[0], b[1], verdict.ModeFix)
			t.Logf("fix, leaky → fixed: %s", headline(t, fixOut))
			if !cmp.Pass || cmp.Mode != verdict.ModeFix || !strings.HasPrefix(headline(t, fixOut), "# leakbench sign-off (fix): PASS") {
				t.Errorf("fix, leaky → fixed: pass %v, checks %+v", cmp.Pass, cmp.Checks)
			}
			// Each side is labelled by its name, its run directory by its side.
			if md := string(readFileT(t, filepath.Join(fixOut, rundir.ReportFile))); !strings.Contains(md, "| | before (`held-while-waiting`) | after (`fixed`) |") {
				t.Errorf("the sign-off's table does not name the builds:\n%s", md)
			}
		})
		t.Run("regression, fixed to leaky", func(t *testing.T) {
			t.Parallel()
			b := startBuilds(t, "reg", pyservice.Fixed, pyservice.HeldWhileWaiting)
			_, cmp := signoffBuilds(t, regOut, b[0], b[1], verdict.ModeRegression)
			t.Logf("regression, fixed → leaky: %s", headline(t, regOut))
			failed := strings.Join(cmp.FailedChecks(), "; ")
			if cmp.Pass || !strings.Contains(failed, "after holds no session where before held none") || !strings.Contains(failed, "after pins no pool where before did not") ||
				!strings.HasPrefix(headline(t, regOut), "# leakbench regression check: FAIL — after regressed: ") {
				t.Errorf("regression, fixed → leaky: pass %v, failed %q", cmp.Pass, failed)
			}
			// The same two runs, asked the fix question the other way round.
			fixBack, err := render.CompareMode(t.TempDir(), filepath.Join(regOut, "before"), filepath.Join(regOut, "after"), render.CompareOptions{Mode: verdict.ModeFix})
			if err != nil || fixBack.Pass {
				t.Errorf("fix, fixed → leaky: %v, pass %v", err, fixBack != nil && fixBack.Pass)
			}
		})
		t.Run("regression, fixed to fixed", func(t *testing.T) {
			t.Parallel()
			b := startBuilds(t, "same", pyservice.Fixed, pyservice.Fixed)
			_, cmp := signoffBuilds(t, okOut, b[0], b[1], verdict.ModeRegression)
			t.Logf("regression, fixed → fixed: %s", headline(t, okOut))
			if !cmp.Pass {
				t.Errorf("regression, fixed → fixed: failed %q: %+v", cmp.FailedChecks(), cmp.Checks)
			}
		})
	})
	if t.Failed() {
		return // the baselines below need all three sign-offs
	}

	// run --baseline: the fixed build's run is the baseline of the others.
	p, err := profiles.Parse([]byte(ownServiceProfile), "own.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := render.ScenarioOfPlan(p.Name, p.Plan)
	if err != nil {
		t.Fatal(err)
	}
	base, err := render.OpenBaseline(filepath.Join(okOut, "before"), sc, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, dir string
		pass      bool
	}{{"fixed", filepath.Join(okOut, "after"), true}, {"leaky", filepath.Join(regOut, "after"), false}} {
		cmp, info, err := render.JudgeBaseline(tt.dir, base, render.BaselineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("run --baseline, %s: %s", tt.name, headline(t, filepath.Join(tt.dir, render.BaselineDirName)))
		if cmp.Pass != tt.pass || info.Regressed == tt.pass {
			t.Errorf("run --baseline, %s: pass %v, want %v: failed %q", tt.name, cmp.Pass, tt.pass, cmp.FailedChecks())
		}
	}
}

// TestSignoffTargetsBadInput: targets given wrong are usage errors found
// before anything runs or is written.
func TestSignoffTargetsBadInput(t *testing.T) {
	a := &SignoffTarget{External: fixtures.External{GatewayURL: "http://127.0.0.1:8080/mcp"}}
	b := &SignoffTarget{External: fixtures.External{GatewayURL: "http://127.0.0.1:8081/mcp"}}
	same := &SignoffTarget{External: fixtures.External{GatewayURL: "HTTP://127.0.0.1:8080/mcp/"}}
	for _, tt := range []struct {
		name string
		o    SignoffOptions
		want []string
	}{
		{"no mode", SignoffOptions{Before: a, After: b}, []string{"two targets need --mode", `"fix" (fix: before must show the leak, after must not)`, `"regression" (regression: after must be no worse than before`}},
		{"unknown mode", SignoffOptions{Before: a, After: b, Mode: "strict"}, []string{`"strict"`}},
		{"one target", SignoffOptions{Before: a, Mode: verdict.ModeFix}, []string{"give both --before-target and --after-target"}},
		{"the same URL", SignoffOptions{Before: a, After: same, Mode: verdict.ModeRegression}, []string{"the same URL (http://127.0.0.1:8080/mcp)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Out = filepath.Join(t.TempDir(), "out")
			_, err := Signoff(context.Background(), tt.o)
			if !errors.Is(err, ErrSignoffTargets) {
				t.Fatalf("Signoff: %v, want ErrSignoffTargets", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if _, err := os.Stat(tt.o.Out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("something was written: %v", err)
			}
		})
	}
	if err := CheckSignoff(SignoffOptions{Before: a, After: b, Mode: "strict"}); !errors.Is(err, verdict.ErrMode) {
		t.Errorf("an unknown mode is not ErrMode: %v", err)
	}
}

// TestSignoffTargetNotAnswering: a target nobody listens on fails the
// sign-off before any load, naming the side and saying it does not
// answer; nothing is written that passes for a result.
func TestSignoffTargetNotAnswering(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	p, err := profiles.Parse([]byte(ownServiceProfile), "own.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err = Signoff(context.Background(), SignoffOptions{Profile: p, Out: out, Mode: verdict.ModeFix,
		Before: &SignoffTarget{External: fixtures.External{GatewayURL: dead}}, After: &SignoffTarget{External: fixtures.External{GatewayURL: dead + "2"}}})
	if err == nil || !strings.Contains(err.Error(), "before run") || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("Signoff: %v, want the before target not answering", err)
	}
	if _, err := os.Stat(filepath.Join(out, rundir.CompareFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a comparison was written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "before", rundir.LoadFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("load was recorded: %v", err)
	}
}
