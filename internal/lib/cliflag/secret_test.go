package cliflag

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
		s := NewSecret(fs, "probe-dsn", "LB_TEST_DSN", "test", "dsn")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := s.Value()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrUsage) {
				t.Errorf("%v: err = %v, want a usage error containing %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: Value() = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
}
