package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/testenv"
)

// TestBisectUsageAborts: with --bisect, a usage error — a mistyped flag,
// before or after --bisect — exits bisectAbort, which stops git bisect run
// instead of skipping every commit; git, on a repository of three commits,
// says so and names no commit.
func TestBisectUsageAborts(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
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
	dir := t.TempDir()
	step := filepath.Join(dir, "step.sh")
	// The mistyped flag: --scenaro. The run directory is in the test's
	// own temporary directory, removed with it.
	script := "#!/bin/sh\nexec \"$LEAKBENCH\" run --bisect --env local --scenaro leakbench.yaml --out \"" + filepath.Join(dir, "run") + "\"\n"
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
