package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// filesContaining lists the files under dir whose content holds s.
func filesContaining(t *testing.T, dir, s string) []string {
	t.Helper()
	var hits []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if raw, err := os.ReadFile(path); err == nil && strings.Contains(string(raw), s) {
			hits = append(hits, path)
		}
		return nil
	})
	return hits
}

// --help prints flag defaults; secrets given through the environment must
// not appear there (#18: `gateway -h` printed LEAKBENCH_GATEWAY_DSN).
func TestHelpShowsNoSecretFromTheEnvironment(t *testing.T) {
	const pw = "hunter2-env-secret"
	t.Setenv("LEAKBENCH_GATEWAY_DSN", "postgres://app:"+pw+"@127.0.0.1:6432/mcp")
	t.Setenv("LEAKBENCH_GATEWAY_UPSTREAM_URL", "http://svc:"+pw+"@127.0.0.1:8090")
	t.Setenv("LEAKBENCH_PROBE_DSN", "postgres://probe:"+pw+"@127.0.0.1:5432/mcp")
	t.Setenv("LEAKBENCH_PGBOUNCER_ADMIN_DSN", "postgres://admin:"+pw+"@127.0.0.1:6432/pgbouncer")
	for _, cmd := range []string{"gateway", "probe", "run", "up", "signoff", "soak", "capacity"} {
		_, stdout, stderr := runCLI(t, nil, cmd, "-h")
		out := stdout + stderr
		if strings.Contains(string(out), pw) {
			t.Errorf("leakbench %s -h prints a secret from the environment:\n%s", cmd, out)
		}
		if !strings.Contains(string(out), "-file") {
			t.Errorf("leakbench %s -h does not offer a --…-file flag for its DSNs:\n%s", cmd, out)
		}
	}
}

// A --target or --probe-dsn with a password that fails must not show the
// password in the error or in any file of the run directory.
func TestCredentialsInFailingTargetAreMasked(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	bin := buildCLI(t)
	const pw, dbpw = "tgt-pass-4815", "db-pass-1623"
	out := filepath.Join(t.TempDir(), "run")
	// Port 1 on loopback: nothing listens, so every connection is refused.
	c := exec.Command(bin, "run", "--env", "external",
		"--target", "http://alice:"+pw+"@127.0.0.1:1/mcp",
		"--metrics-url", "http://bob:"+pw+"@127.0.0.1:1/metrics",
		"--probe-dsn", "postgres://probe:"+dbpw+"@127.0.0.1:1/mcp",
		"--scenario", filepath.Join("..", "..", "scenarios", "profiles", "ci.yaml"),
		"--out", out)
	msg, err := c.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("run against a dead target: err = %v, want a non-zero exit\n%s", err, msg)
	}
	for _, secret := range []string{pw, dbpw} {
		if strings.Contains(string(msg), secret) {
			t.Errorf("the error output holds the password %q:\n%s", secret, msg)
		}
		if hits := filesContaining(t, out, secret); len(hits) > 0 {
			t.Errorf("run directory files hold the password %q: %v", secret, hits)
		}
	}
}

// TestRunDirectoryHoldsNoSecret: a probed run that succeeds writes its
// whole run directory — config.json, samples, summary, reports, logs —
// and none of the secrets it was given may be in any of it, nor in what
// it prints. Unlike a refused target (TestCredentialsInFailingTargetAreMasked),
// this run gets past the preflight, so every writer has its turn. The
// secrets are the real ones of a real stack: the probe's and PgBouncer's
// per-stack passwords, the gateway's bearer tokens (it refuses requests
// without them), plus a password in the metrics URL's userinfo, an
// api_key query parameter, a token in the scenario file's own target and
// a secret-looking header. A password in the target's userinfo is refused
// by the plan, but only once the stack is attached: that run is checked
// too.
func TestRunDirectoryHoldsNoSecret(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, PgBouncer and the gateway")
	}
	bin := buildCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	env := fixturetest.StartLocal(t, ctx, stack.Config{Variant: "fixed", Users: 4, IdleInTxTimeout: 5 * time.Second})
	const (
		metricsPW = "metrics-userinfo-9021"
		apiKey    = "query-api-key-5512"
		headerKey = "header-api-key-3318"
		fileToken = "file-target-token-6604"
	)
	secrets := map[string]string{
		"metrics URL password":         metricsPW,
		"api_key parameter":            apiKey,
		"X-Api-Key header":             headerKey,
		"scenario file's target token": fileToken,
		"probe DSN password":           password(t, env.ProbeDSN),
		"PgBouncer password":           password(t, env.PgBouncerAdminDSN),
	}
	for i, tok := range env.Tokens {
		secrets["bearer token "+strconv.Itoa(i)] = tok
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(strings.Join(env.Tokens, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte(`probe: {interval: 100ms, stuck_after: 1s, drain: 500ms}
target: http://127.0.0.1:1/mcp?token=`+fileToken+`
headers: {X-Api-Key: `+headerKey+`}
scenarios:
  s:
    executor: constant-vus
    vus: 4
    duration: 2s
    gracefulStop: 1s
    flow: [tools/list, {tools/call: {name: get_team_tools}}, think: 50ms]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(env.GatewayURL)
	if err != nil {
		t.Fatal(err)
	}
	q := target.Query()
	q.Set("api_key", apiKey)
	target.RawQuery = q.Encode()
	out := filepath.Join(dir, "run")
	c := exec.CommandContext(ctx, bin, "run", "--env", "external",
		"--target", target.String(),
		"--metrics-url", withSecrets(t, env.GatewayMetricsURL, "bob", metricsPW).String(),
		"--probe-dsn", env.ProbeDSN,
		"--pgbouncer-admin-dsn", env.PgBouncerAdminDSN,
		"--tokens-file", tokens,
		"--scenario", scenario, "--out", out)
	c.Env = append(os.Environ(), "LEAKBENCH_PROBE_DSN=", "LEAKBENCH_PGBOUNCER_ADMIN_DSN=")
	msg, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, msg)
	}
	// The run must really have written what a run writes, with the probe
	// and the gateway's metrics in it: a run directory without them would
	// hold no secret for want of a writer.
	var files []string
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	for _, f := range []string{"config.json", "samples.jsonl", "summary.json", "report.md", "report.html", "junit.xml", "load.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the run wrote no %s: %v", f, err)
		}
	}
	if raw, _ := os.ReadFile(filepath.Join(out, "samples.jsonl")); !strings.Contains(string(raw), `"pgbouncer"`) || !strings.Contains(string(raw), `"app_pool"`) {
		t.Errorf("samples.jsonl has no PgBouncer or service pool samples: the PgBouncer DSN and the metrics URL were not used")
	}
	// Secrets in a URL's query are not redacted everywhere today: the
	// plan's target (scenarios/plan/json.go, Plan.MarshalJSON) and the
	// load's config (internal/lib/rundir/result.go, PlanSummary) are written
	// as given, and the load's start line prints it (internal/app/runner/
	// run.go, playInProcess). Those places are listed here, to the JSON
	// path, so that this test holds what is redacted today and fails on
	// any new place; a known leak that is fixed is only logged.
	checkLeaks(t, msg, out, files, secrets, map[string][]string{
		"api_key parameter": {"output", "series.json plan.target",
			"summary.json load.config.target", "summary.json load.plan.target"},
		"scenario file's target token": {"config.json profile.plan.target"},
	})

	// A target with a password in its userinfo: refused, after the
	// load's start line has printed it (the same line as above).
	const targetPW = "tgt-userinfo-7734"
	refused := filepath.Join(dir, "refused")
	c = exec.CommandContext(ctx, bin, "run", "--env", "external",
		"--target", withSecrets(t, env.GatewayURL, "alice", targetPW).String(),
		"--probe-dsn", env.ProbeDSN, "--tokens-file", tokens,
		"--scenario", scenario, "--out", refused)
	c.Env = append(os.Environ(), "LEAKBENCH_PROBE_DSN=", "LEAKBENCH_PGBOUNCER_ADMIN_DSN=")
	msg, err = c.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(string(msg), "must not contain credentials") {
		t.Fatalf("a target with a password: %v, want it refused\n%s", err, msg)
	}
	files = files[:0]
	_ = filepath.WalkDir(refused, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	secrets["target URL password"] = targetPW
	checkLeaks(t, msg, refused, files, secrets, map[string][]string{
		"target URL password":          {"output"},
		"scenario file's target token": {"config.json profile.plan.target"},
	})
}

// checkLeaks fails the test for each place (the command's output, a file
// of dir, a string of a JSON file) that holds one of secrets, but for the
// known ones, and logs the known ones no longer found.
func checkLeaks(t *testing.T, msg []byte, dir string, files []string, secrets map[string]string, known map[string][]string) {
	t.Helper()
	failed := t.Failed()
	for what, secret := range secrets {
		var where []string
		if strings.Contains(string(msg), secret) {
			where = append(where, "output")
		}
		for _, f := range files {
			where = append(where, placesOf(t, dir, f, secret)...)
		}
		for _, w := range where {
			if !slices.Contains(known[what], w) {
				t.Errorf("the %s leaks into %s", what, w)
			}
		}
		for _, w := range known[what] {
			if !slices.Contains(where, w) {
				t.Logf("the %s no longer leaks into %s: take it off the known leaks", what, w)
			}
		}
	}
	if !failed && t.Failed() {
		t.Logf("output:\n%s", msg)
	}
}

// placesOf names where secret is in file f of dir: "summary.json
// load.plan.target" for each string of a JSON file that holds it, the
// file's name for other files.
func placesOf(t *testing.T, dir, f, secret string) []string {
	t.Helper()
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), secret) {
		return nil
	}
	name, _ := filepath.Rel(dir, f)
	var v any
	if !strings.HasSuffix(f, ".json") || json.Unmarshal(raw, &v) != nil {
		return []string{name}
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(strings.TrimPrefix(path+"."+k, "."), x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		case string:
			if strings.Contains(v, secret) {
				out = append(out, name+" "+path)
			}
		}
	}
	walk("", v)
	if len(out) == 0 {
		// In a key, or escaped so that the strings do not show it.
		out = []string{name}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// password is the password of a URL DSN.
func password(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := u.User.Password()
	if !ok || len(pw) < 8 {
		t.Fatalf("DSN %s has no password worth looking for", u.Redacted())
	}
	return pw
}

// withSecrets is raw with user:pw as its userinfo.
func withSecrets(t *testing.T, raw, user, pw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, pw)
	return u
}
