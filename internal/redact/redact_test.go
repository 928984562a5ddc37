package redact

import (
	"strings"
	"testing"
)

func TestDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://app:s3cret@127.0.0.1:5432/mcp?sslmode=disable", "postgres://app:xxxxx@127.0.0.1:5432/mcp?sslmode=disable"},
		{"postgresql://app@host/db", "postgresql://app@host/db"},
		{"postgres://app@host/db?password=s3cret", "postgres://app@host/db?password=xxxxx"},
		{"host=db user=app password=s3cret dbname=mcp", "host=db user=app password=xxxxx dbname=mcp"},
		{"host=db password='s3 cret' dbname=mcp", "host=db password=xxxxx dbname=mcp"},
		{"postgres://app:s3cret@[bad", "xxxxx"},
		{"", ""},
	}
	for _, tt := range tests {
		got := DSN(tt.in)
		if got != tt.want {
			t.Errorf("DSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, "s3cret") || strings.Contains(got, "s3 cret") {
			t.Errorf("DSN(%q) leaks the password: %q", tt.in, got)
		}
	}
}

func TestString(t *testing.T) {
	in := `connect postgres://app:s3cret@h/db failed; header Authorization: Bearer lbt_0123456789abcdef; password=hunter2; token lbt_deadbeefdeadbeef`
	got := String(in)
	for _, secret := range []string{"s3cret", "0123456789abcdef", "hunter2", "deadbeefdeadbeef"} {
		if strings.Contains(got, secret) {
			t.Errorf("String leaks %q: %s", secret, got)
		}
	}
	if !strings.Contains(got, "postgres://app:xxxxx@h/db") {
		t.Errorf("String mangled the DSN: %s", got)
	}
}

func FuzzString(f *testing.F) {
	f.Add("postgres://u:p@h/d password=x Bearer y")
	f.Fuzz(func(t *testing.T, s string) {
		_ = String(s)
		_ = DSN(s)
	})
}
