package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/testenv"
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

// TestGitBisectFindsTheLeakyCommit makes a repository whose commits switch
// the gateway variant — fixed, a commit that cannot be tested (its scenario
// does not parse: skipped), fixed, then commit-in-finally from the fourth commit
// on — and asserts that git bisect run with leakbench --bisect names the
// fourth commit. Each step is a real run on a local PostgreSQL + PgBouncer
// stack (about 11 s); git tests two or three commits.
func TestGitBisectFindsTheLeakyCommit(t *testing.T) {
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

// TestBisectUsageAborts: with --bisect, a usage error — a mistyped flag,
// before or after --bisect — exits bisectAbort, which stops git bisect run
// instead of skipping every commit; git, on a repository of three commits,
// says so and names no commit.
func TestBisectUsageAborts(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, "git not installed (make deps)")
	}
	bin := buildCLI(t)
	for _, args := range [][]string{
		{"run", "--bisect", "--scenaro", "leakbench.yaml", "--out", t.TempDir()},
		{"run", "--scenaro", "leakbench.yaml", "--bisect", "--out", t.TempDir()},
		{"run", "--bisect=true", "--variant", "no-such-variant", "--out", t.TempDir()},
		{"signoff", "--bisect", "--no-such-flag"},
	} {
		cmd := exec.Command(bin, args...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != bisectAbort {
			t.Errorf("leakbench %s: exit %d, want %d (abort the bisect)\n%s", strings.Join(args, " "), code, bisectAbort, out)
		}
	}

	repo := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=leakbench test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=leakbench test", "GIT_COMMITTER_EMAIL=test@example.invalid", "LEAKBENCH="+bin)
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	mustGit := func(args ...string) string {
		t.Helper()
		out, err := git(args...)
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(out)
	}
	mustGit("init", "-q")
	var shas []string
	for i := range 3 {
		if err := os.WriteFile(filepath.Join(repo, "NOTES"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		mustGit("add", "NOTES")
		mustGit("commit", "-q", "-m", fmt.Sprintf("commit %d", i))
		shas = append(shas, mustGit("rev-parse", "HEAD"))
	}
	step := filepath.Join(t.TempDir(), "step.sh")
	// The mistyped flag: --scenaro.
	script := "#!/bin/sh\nexec \"$LEAKBENCH\" run --bisect --env local --scenaro leakbench.yaml --out \"$(mktemp -d)/run\"\n"
	if err := os.WriteFile(step, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit("bisect", "start", shas[2], shas[0])
	out, err := git("bisect", "run", step)
	log := mustGit("bisect", "log")
	mustGit("bisect", "reset")
	if err == nil || strings.Contains(out, "is the first bad commit") || strings.Contains(log, "# skip") {
		t.Fatalf("git bisect run went on past a usage error (err %v):\n%s\nlog:\n%s", err, out, log)
	}
	if !strings.Contains(out, fmt.Sprint(bisectAbort)) {
		t.Errorf("git bisect run does not say it stopped on exit %d:\n%s", bisectAbort, out)
	}
}
