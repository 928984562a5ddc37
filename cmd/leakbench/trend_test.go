package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/app/history/trend"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestTrendOut: leakbench trend --out follows the --out rules of every
// other command (rundir.Prepare): a directory holding a file of the
// user's is refused, exit 2, the file untouched, with --force too; an
// empty or missing directory is written and marked; a trend's own
// directory is refused without --force and replaced with it.
func TestTrendOut(t *testing.T) {
	t.Parallel() // waits on its servers or subprocesses, not on the CPU
	bin := buildCLI(t)
	hist := filepath.Join(t.TempDir(), "history")
	st, err := history.Open(hist)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"v1", "v2"} {
		e := &history.Entry{Kind: history.KindRun, Release: rel, Profile: "ci", Pass: true, VerdictPass: true,
			Environment: history.Environment{Provider: "local", Variant: "fixed"},
			Figures:     history.Figures{EndReason: "completed", LoadRecorded: true, RequestRate: 100, LatencyP95Ms: 50}}
		if _, err := st.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	trendCLI := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"trend", hist}, args...)...)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	written := func(dir string) {
		t.Helper()
		for _, f := range []string{trend.HTMLFile, trend.MarkdownFile, rundir.MarkerFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s lacks %s: %v", dir, f, err)
			}
		}
	}

	users := t.TempDir()
	mine := filepath.Join(users, "notes.txt")
	if err := os.WriteFile(mine, []byte("my notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		args := []string{"--out", users}
		if force {
			args = append(args, "--force")
		}
		code, out := trendCLI(args...)
		if code != exitUsage {
			t.Errorf("trend %q into a directory of the user's: exit %d, want %d (a refusal)\n%s", args, code, exitUsage, out)
		}
		if !strings.Contains(out, users) {
			t.Errorf("the refusal does not name the directory:\n%s", out)
		}
		entries, _ := os.ReadDir(users)
		if raw, err := os.ReadFile(mine); err != nil || string(raw) != "my notes\n" || len(entries) != 1 {
			t.Fatalf("the user's directory was touched: %d entries, notes.txt %q, %v", len(entries), raw, err)
		}
	}

	empty := t.TempDir()
	if code, out := trendCLI("--out", empty); code != exitOK {
		t.Fatalf("trend into an empty directory: exit %d\n%s", code, out)
	}
	written(empty)
	if code, out := trendCLI("--out", empty); code == exitOK || !strings.Contains(out, "--force") {
		t.Errorf("trend again into its own directory without --force: exit %d, want a refusal naming --force\n%s", code, out)
	}
	if code, out := trendCLI("--out", empty, "--force"); code != exitOK {
		t.Errorf("trend again into its own directory with --force: exit %d\n%s", code, out)
	}
	written(empty)
	missing := filepath.Join(t.TempDir(), "new", "trend")
	if code, out := trendCLI("--out", missing); code != exitOK {
		t.Errorf("trend into a new directory: exit %d\n%s", code, out)
	}
	written(missing)

	// Flags before the history directory read the same (#27: they failed).
	first := filepath.Join(t.TempDir(), "first")
	cmd := exec.Command(bin, "trend", "--out", first, hist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("trend --out DIR HISTORY: %v\n%s", err, out)
	}
	written(first)
}
