package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
)

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

// TestSignoffWithCapacity: signoff --capacity signs the pair off, then
// searches both variants' capacity on local stacks into OUT/capacity/ —
// before, then after — and prints each search's headline.
func TestSignoffWithCapacity(t *testing.T) {
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
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("signoff --capacity: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "capacity", "summary.json"))
	if err != nil {
		t.Fatalf("no capacity summary: %v", err)
	}
	var sum reports.CapacitySummary
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
func checkSignoffCapacity(t *testing.T, out string, sum *reports.CapacitySummary, stdout string) {
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
		if v.AtLeast != (s.Outcome == reports.CapacityAboveMax || s.Outcome == reports.CapacityInconclusive) {
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
