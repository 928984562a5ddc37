package servers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// leakbench up masks passwords and tokens unless --show-secrets.
func TestDescribeEnvMasksSecrets(t *testing.T) {
	env := &fixtures.Env{Provider: "local", Config: stack.Config{Variant: "fixed"},
		GatewayURL: "http://127.0.0.1:8080/mcp", ProbeDSN: "postgres://probe:s3cret@127.0.0.1:5432/app",
		Tokens: []string{"tok-abcdef"}}
	tests := []struct {
		secrets bool
		want    []string
		not     []string
	}{
		{false, []string{"1 bearer tokens (masked", "variant fixed", "postgres (probe)"}, []string{"s3cret", "tok-abcdef"}},
		{true, []string{"s3cret", "first tok-abcdef"}, nil},
	}
	for _, tt := range tests {
		info := describeEnv(env, tt.secrets)
		var out bytes.Buffer
		printEnvTable(&out, info)
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("secrets %v: table lacks %q:\n%s", tt.secrets, w, out.String())
			}
		}
		for _, n := range tt.not {
			if strings.Contains(out.String(), n) {
				t.Errorf("secrets %v: table shows %q:\n%s", tt.secrets, n, out.String())
			}
		}
	}
}
