//go:build e2e

package main

// The whole-stack subprocess tests: the built binary driving real stacks
// for minutes, where the in-process tests already cover the command line.
// make e2e runs them (go test -tags e2e -run '^TestE2E' ./cmd/leakbench/).

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// bisectScenario is a profile small enough for one bisect step in about
// 11 s on a 2-core machine: 8 users for 3 s, one call in four a slow report
// the client abandons after 300 ms — the fault that makes the leaky
// cleanup skip its release — and a 2 s idle_in_transaction_session_timeout
// so leaked sessions end soon after the load.
const bisectScenario = `stack:
  idle_in_transaction_session_timeout: 2s
  max_connections: 50
  pool_mode: transaction
  pgbouncer_pool_size: 20
  gateway_pool_size: 20
  users: 20
probe:
  interval: 100ms
  stuck_after: 1s
  drain: 3s
timeout: 3s
seed: 1
scenarios:
  agents:
    executor: constant-vus
    vus: 8
    duration: 3s
    gracefulStop: 1s
    flow:
      - think: { uniform: [50ms, 150ms] }
      - choose:
          - weight: 3
            steps:
              - tools/call: { name: get_team_tools }
          - weight: 1
            steps:
              - tools/call: { name: generate_report, arguments: { seconds: 1 }, abortAfter: 300ms }
`

// bisectStep is what git bisect run runs at each commit: the built
// leakbench, a run of the variant the commit's gateway-variant file names,
// with --bisect turning the verdict into git's exit codes, and the result
// appended to a history labelled with the commit.
const bisectStep = `#!/bin/sh
set -u
rev=$(git rev-parse --short HEAD)
exec "$LEAKBENCH" run --bisect --env local --scenario leakbench.yaml \
  --variant "$(cat gateway-variant)" --out "$OUTROOT/run-$rev" \
  --history "$OUTROOT/history" --release "$rev"
`

// TestE2EGitBisectFindsTheLeakyCommit makes a repository whose commits switch
// the gateway variant — fixed, a commit that cannot be tested (its scenario
// does not parse: skipped), fixed, then commit-in-finally from the fourth commit
// on — and asserts that git bisect run with leakbench --bisect names the
// fourth commit. Each step is a real run on a local PostgreSQL + PgBouncer
// stack (about 11 s); git tests two or three commits.
func TestE2EGitBisectFindsTheLeakyCommit(t *testing.T) {
	t.Parallel() // its runs wait on their stacks and the clock; beside the dashboard's sign-off
	if testing.Short() {
		t.Skip("integration test: runs local stacks, 2–4 runs of ~11 s")
	}
	requireLocalStack(t, "git", "go")
	bin := buildCLI(t)
	repo, outRoot := t.TempDir(), t.TempDir()
	step := filepath.Join(t.TempDir(), "bisect-step.sh")
	if err := os.WriteFile(step, []byte(bisectStep), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=leakbench test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=leakbench test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"LEAKBENCH="+bin, "OUTROOT="+outRoot, "LEAKBENCH_RELEASE=")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	// The second commit cannot be tested: its scenario does not parse.
	const brokenScenario = "scenarios: {agents: {executor: half-done, flow: [ping]}}\n"
	commits := []struct{ variant, scenario, msg string }{
		{"fixed", bisectScenario, "gateway: release before any I/O"},
		{"fixed", brokenScenario, "gateway: half-done refactor (its scenario does not parse)"},
		{"fixed", bisectScenario, "gateway: refactor finished"},
		{"commit-in-finally", bisectScenario, "gateway: commit and close in the finally block"},
		{"commit-in-finally", bisectScenario, "docs"},
		{"commit-in-finally", bisectScenario, "more docs"},
	}
	var shas, shorts []string
	for i, c := range commits {
		if err := os.WriteFile(filepath.Join(repo, "gateway-variant"), []byte(c.variant+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "leakbench.yaml"), []byte(c.scenario), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "NOTES"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", c.msg)
		shas = append(shas, git("rev-parse", "HEAD"))
		shorts = append(shorts, git("rev-parse", "--short", "HEAD"))
	}

	// A commit that cannot be tested is skipped (125), not called bad.
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte(brokenScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	skip := exec.Command(bin, "run", "--bisect", "--env", "local", "--scenario", broken, "--out", filepath.Join(outRoot, "skip"))
	if err := skip.Run(); skip.ProcessState == nil || skip.ProcessState.ExitCode() != bisectSkip {
		t.Fatalf("run --bisect with a scenario that does not parse: %v, want exit %d", err, bisectSkip)
	}
	git("bisect", "start", shas[len(shas)-1], shas[0])
	cmd := exec.Command("git", "bisect", "run", step)
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	log := git("bisect", "log")
	git("bisect", "reset")
	if err != nil {
		if strings.Contains(string(out), "missing program") {
			testenv.Missing(t, "PostgreSQL or PgBouncer not installed (make deps)")
		}
		t.Fatalf("git bisect run: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^([0-9a-f]{40}) is the first bad commit`).FindStringSubmatch(string(out))
	if m == nil || m[1] != shas[3] {
		t.Fatalf("git bisect named %v, want %s (commit-in-finally introduced)\n%s\nlog:\n%s", m, shas[3], out, log)
	}
	t.Logf("bisect log:\n%s", log)

	// Every step left an entry labelled with its commit; the leaky one
	// failed, the fixed ones passed; the untestable commit left none.
	st, err := os.ReadDir(filepath.Join(outRoot, "history"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, de := range st {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(outRoot, "history", de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Release string `json:"release"`
			Pass    bool   `json:"pass"`
			Env     struct {
				Variant string `json:"variant"`
			} `json:"environment"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		got[e.Release] = e.Pass
		if e.Pass != (e.Env.Variant == "fixed") {
			t.Errorf("entry of %s (%s): pass %v", e.Release, e.Env.Variant, e.Pass)
		}
	}
	if pass, ok := got[shorts[3]]; !ok || pass {
		t.Errorf("history: no failed entry for the leaky commit %s: %v", shorts[3], got)
	}
	if _, ok := got[shorts[1]]; ok {
		t.Errorf("history: an entry for the untestable commit %s", shorts[1])
	}
}

// signoffCapacityProfile is the ci profile cut short, with a small
// capacity: section: a sign-off of a few seconds a run, then a search of
// at most two 5-second stages a variant.
const signoffCapacityProfile = `
stack:
  idle_in_transaction_session_timeout: 3s
  max_connections: 100
  pool_mode: transaction
  pgbouncer_pool_size: 20
  gateway_pool_size: 20
  users: 50
probe:
  interval: 100ms
  stuck_after: 1s
  drain: 5s
signoff:
  variant_before: commit-in-finally
  variant_after: fixed
capacity:
  load: users
  start: 4
  max: 8
  stage: 5s
  max_stages: 2
  resolution: 2
  error_rate: 0.5
timeout: 3s
seed: 1
scenarios:
  agents:
    executor: constant-vus
    vus: 20
    duration: 6s
    gracefulStop: 1s
    flow:
      - think: { uniform: [50ms, 150ms] }
      - choose:
          - weight: 8
            steps:
              - tools/call: { name: get_team_tools }
          - weight: 2
            steps:
              - tools/call: { name: generate_report, arguments: { seconds: 2 }, abortAfter: 500ms }
thresholds:
  mcp_req_failed: ["rate<0.5"]
`

// TestE2ESignoffWithCapacity: signoff --capacity signs the pair off, then
// searches both variants' capacity on local stacks into OUT/capacity/ —
// before, then after — and prints each search's headline.
func TestE2ESignoffWithCapacity(t *testing.T) {
	t.Parallel() // 4–8 users on local stacks, waiting on the clock; its verdict is the sign-off's, not a figure's accuracy
	if testing.Short() {
		t.Skip("integration test: a sign-off and two capacity searches on local stacks (about a minute)")
	}
	requireLocalStack(t)
	bin := buildCLI(t)
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(prof, []byte(signoffCapacityProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "signoff", "--scenario", prof, "--env", "local", "--capacity", "--out", out)
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("signoff --capacity: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "capacity", "summary.json"))
	if err != nil {
		t.Fatalf("no capacity summary: %v", err)
	}
	var sum capreport.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	s := sum.Capacity.Searches
	if len(s) != 2 || s[0].Name != "commit-in-finally" || s[1].Name != "fixed" {
		t.Fatalf("searches %+v, want commit-in-finally then fixed", s)
	}
	for _, x := range s {
		if len(x.Stages) == 0 || !strings.Contains(string(stdout), x.Headline()) {
			t.Errorf("search %s: %d stages; headline %q printed: %v", x.Name, len(x.Stages), x.Headline(), strings.Contains(string(stdout), x.Headline()))
		}
	}
	if c := sum.Capacity.Change; c == nil || !strings.Contains(string(stdout), c.Line) {
		t.Errorf("change %+v not printed", c)
	}
	for _, f := range []string{"report.md", "capacity/report.md", "capacity/junit.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	checkSignoffCapacity(t, out, &sum, string(stdout))
	t.Logf("stdout:\n%s", stdout)
}

// checkSignoffCapacity: the sign-off's own compare.json, report.md and
// report.html carry the searches in out/capacity as they were printed.
func checkSignoffCapacity(t *testing.T, out string, sum *capreport.Summary, stdout string) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var cmp reports.Comparison
	if err := json.Unmarshal(read("compare.json"), &cmp); err != nil {
		t.Fatal(err)
	}
	c := cmp.Capacity
	if c == nil || c.Dir != "capacity" || len(c.Variants) != 2 {
		t.Fatalf("compare.json capacity: %+v", c)
	}
	if c.ChangeLine != sum.Capacity.Change.Line || !strings.Contains(stdout, c.ChangeLine) {
		t.Errorf("compare.json change line %q; printed and in capacity/summary.json: %q", c.ChangeLine, sum.Capacity.Change.Line)
	}
	md, html := read("report.md"), read("report.html")
	for i, v := range c.Variants {
		s := sum.Capacity.Searches[i]
		if v.Name != s.Name || v.Capacity != s.Capacity || v.Limit != s.Limit || v.Headline != s.Headline() || !strings.Contains(stdout, v.Headline) {
			t.Errorf("compare.json variant %d %+v; the search: %s", i, v, s.Headline())
		}
		if v.AtLeast != (s.Outcome == capreport.AboveMax || s.Outcome == capreport.Inconclusive) {
			t.Errorf("variant %s: at_least %v for outcome %s", v.Name, v.AtLeast, s.Outcome)
		}
		if !strings.Contains(string(md), "- "+v.Headline) {
			t.Errorf("report.md lacks %q:\n%s", v.Headline, md)
		}
	}
	if !strings.Contains(string(md), "## Capacity\n\n**"+c.ChangeLine+"**") || !strings.Contains(string(html), "<h2>Capacity</h2>") {
		t.Errorf("the sign-off's report.md or report.html has no Capacity section with the change line:\n%s", md)
	}
}

// requireLocalStack fails (in CI) or skips the test when PostgreSQL,
// PgBouncer or one of the other programs it runs is not installed.
func requireLocalStack(t *testing.T, programs ...string) {
	t.Helper()
	for _, prog := range append([]string{"pgbouncer"}, programs...) {
		if _, err := exec.LookPath(prog); err != nil {
			testenv.Missing(t, "%s not installed (make deps)", prog)
		}
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(m) == 0 {
		if _, err := exec.LookPath("postgres"); err != nil {
			testenv.Missing(t, "PostgreSQL not installed (make deps)")
		}
	}
}
