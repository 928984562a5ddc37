package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// testCLI is a cli on the test process's own streams and environment.
func testCLI() *cli { return newCLI(os.Stdout, os.Stderr, os.Getenv) }

// isolatedCLI is a cli on the test process's own streams whose
// environment is empty: what the machine sets (LEAKBENCH_PROBE_DSN, …)
// does not change the command, without t.Setenv, which would keep the
// test from running in parallel.
func isolatedCLI() *cli { return newCLI(os.Stdout, os.Stderr, func(string) string { return "" }) }

// runCLI runs the command line args in-process, as the binary would, and
// returns its exit code, stdout and stderr.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := newCLI(&out, &errOut, func(k string) string { return env[k] })
	code = c.main(context.Background(), args)
	return code, out.String(), errOut.String()
}

// TestCLIGrammar: the command line's shape, in-process: help on stdout
// with exit 0, a usage error in one line with a suggestion and a pointer
// to -h (exit 2), versions, completions.
func TestCLIGrammar(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-h"}, exitOK, "Commands:", ""},
		{[]string{"--help"}, exitOK, "signoff", ""},
		{[]string{"help", "run"}, exitOK, "--target", ""},
		{[]string{}, exitUsage, "", "Usage: leakbench COMMAND"},
		{[]string{"runn"}, exitUsage, "", "did you mean `run`?"},
		{[]string{"run", "-h"}, exitOK, "Examples:", ""},
		{[]string{"run", "--help"}, exitOK, "--probe-dsn", ""},
		{[]string{"run", "--tagret", "http://127.0.0.1:1/mcp"}, exitUsage, "", "did you mean `--target`?"},
		{[]string{"signoff", "--befor-target", "x"}, exitUsage, "", "did you mean `--before-target`?"},
		{[]string{"run", "--out", "x", "--vus", "many"}, exitUsage, "", "-vus"},
		{[]string{"version"}, exitOK, "commit ", ""},
		{[]string{"--version"}, exitOK, "go1", ""},
		{[]string{"completion", "bash"}, exitOK, "--before-probe-dsn", ""},
		{[]string{"completion", "zsh"}, exitOK, "#compdef leakbench", ""},
		{[]string{"completion", "fish"}, exitOK, "-l scenario-name", ""},
		{[]string{"completion", "tcsh"}, exitUsage, "", "tcsh"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if code == exitUsage && len(tc.args) > 0 {
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if len(lines) != 2 || !strings.Contains(lines[1], "-h") {
					t.Errorf("a usage error is its reason and a pointer to -h, two lines; got:\n%s", stderr)
				}
				if stdout != "" {
					t.Errorf("a usage error printed help on stdout:\n%s", stdout)
				}
			}
		})
	}
}

// TestQuietPrintsOnlyTheVerdict: --quiet leaves the progress lines and
// tables out; the report's path is still printed.
func TestQuietPrintsOnlyTheVerdict(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "version", "--quiet")
	if code != exitOK || !strings.Contains(stdout, "leakbench") || stderr != "" {
		t.Fatalf("version --quiet: %d %q %q", code, stdout, stderr)
	}
	c := newCLI(&bytes.Buffer{}, &bytes.Buffer{}, func(string) string { return "1" })
	c.main(context.Background(), []string{"version", "--quiet"})
	if !c.quiet || c.color {
		t.Errorf("--quiet with NO_COLOR set: quiet %v color %v", c.quiet, c.color)
	}
}

// TestHelpOfEveryCommand: every command's -h goes to stdout with exit 0,
// groups its flags, ends with 2–3 examples, and every flag an example
// gives is one the command defines.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, name := range commandNames() {
		t.Run(name, func(t *testing.T) {
			if !onCLI(name) {
				t.Skipf("%s prints to os.Stdout itself: its help cannot be read in-process until it runs on a cli", name)
			}
			code, stdout, stderr := runCLI(t, nil, name, "-h")
			if code != exitOK || stderr != "" || !strings.Contains(stdout, "Usage: leakbench "+name) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			ex := helpExamples[name]
			if len(ex) < 2 || len(ex) > 3 || !strings.Contains(stdout, "Examples:\n  "+ex[0]) {
				t.Errorf("%d examples; help:\n%s", len(ex), stdout)
			}
			fs := flagsOf(context.Background(), name)
			for _, e := range ex {
				if !strings.Contains(e, "leakbench "+name) {
					t.Errorf("example %q is not of %s", e, name)
				}
				for _, w := range strings.Fields(e) {
					if !strings.HasPrefix(w, "--") {
						continue
					}
					f := strings.SplitN(strings.TrimPrefix(w, "--"), "=", 2)[0]
					if fs.Lookup(f) == nil {
						t.Errorf("example %q gives --%s, which %s does not define", e, f, name)
					}
				}
			}
		})
	}
}

// TestRunQuiet: run --quiet prints the report's path and nothing else —
// no progress lines, no summary table — and a failed verdict its one
// line on stderr.
func TestRunQuiet(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	dir := t.TempDir()
	scen := writeScenario(t, dir, "s", 2, "400ms")
	out := filepath.Join(dir, "run")
	code, stdout, stderr := runCLI(t, nil, "run", "--quiet", "--target", target, "--scenario", scen, "--out", out)
	if code != exitOK || strings.TrimSpace(stdout) != "report: "+out+"/report.html" || stderr != "" {
		t.Errorf("run --quiet: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, nil, "run", "--target", target, "--scenario", scen, "--out", out, "--force")
	if code != exitOK || !strings.Contains(stdout, "Requests") {
		t.Errorf("run without --quiet prints no summary: exit %d\n%s", code, stdout)
	}
}

// TestEnvironmentIsAValue: the own-service secrets come from the cli's
// environment, not the process's: a probe DSN given only there is seen.
func TestEnvironmentIsAValue(t *testing.T) {
	t.Setenv("LEAKBENCH_PROBE_DSN", "")
	args := []string{"soak", "--target", "http://127.0.0.1:1/mcp", "--out", filepath.Join(t.TempDir(), "soak")}
	code, _, stderr := runCLI(t, nil, args...)
	if code != exitUsage || !strings.Contains(stderr, "needs a probe DSN") {
		t.Fatalf("no probe DSN anywhere: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, map[string]string{"LEAKBENCH_PROBE_DSN": "postgres://probe:pw-in-env@127.0.0.1:1/db"}, args...)
	if code != exitRunFailed || strings.Contains(stderr, "needs a probe DSN") || strings.Contains(stderr, "pw-in-env") {
		t.Fatalf("a probe DSN in the cli's environment: exit %d (want %d: the target does not answer)\n%s", code, exitRunFailed, stderr)
	}
}
