package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	bin := buildCLI(t)
	const pw = "hunter2-env-secret"
	env := append(os.Environ(),
		"LEAKBENCH_GATEWAY_DSN=postgres://app:"+pw+"@127.0.0.1:6432/mcp",
		"LEAKBENCH_GATEWAY_UPSTREAM_URL=http://svc:"+pw+"@127.0.0.1:8090",
		"LEAKBENCH_PROBE_DSN=postgres://probe:"+pw+"@127.0.0.1:5432/mcp",
		"LEAKBENCH_PGBOUNCER_ADMIN_DSN=postgres://admin:"+pw+"@127.0.0.1:6432/pgbouncer",
	)
	for _, cmd := range []string{"gateway", "probe", "run", "up"} {
		c := exec.Command(bin, cmd, "-h")
		c.Env = env
		out, _ := c.CombinedOutput()
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

func TestSecretFlagSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "dsn")
	if err := os.WriteFile(file, []byte("\n  postgres://u:from-file@127.0.0.1/db  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LB_TEST_DSN", "postgres://u:from-env@127.0.0.1/db")
	tests := []struct {
		args    []string
		want    string
		wantErr string
	}{
		{nil, "postgres://u:from-env@127.0.0.1/db", ""},
		{[]string{"--probe-dsn", "postgres://u:from-flag@h/db"}, "postgres://u:from-flag@h/db", ""},
		{[]string{"--dsn", "postgres://u:alias@h/db"}, "postgres://u:alias@h/db", ""},
		{[]string{"--probe-dsn-file", file}, "postgres://u:from-file@127.0.0.1/db", ""},
		{[]string{"--probe-dsn", "x", "--probe-dsn-file", file}, "", "not both"},
		{[]string{"--probe-dsn-file", empty}, "", "is empty"},
		{[]string{"--probe-dsn-file", filepath.Join(dir, "missing")}, "", "no such file"},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		s := newSecretFlag(fs, "probe-dsn", "LB_TEST_DSN", "test", "dsn")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := s.Value()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errUsage) {
				t.Errorf("%v: err = %v, want a usage error containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: Value() = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
}
