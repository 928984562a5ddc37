package mcptest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/testing/testenv"
)

// TestNotInProductBinary: the product binary links none of
// internal/testing — not this server, not testenv. Only tests import
// them; an import from product code would ship a test MCP server in
// leakbench.
func TestNotInProductBinary(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "the go tool is not on PATH (the test lists the binary's packages with go list -deps): %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "./cmd/leakbench")
	cmd.Dir = "../../.." // the module's root
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps ./cmd/leakbench: %v\n%s", err, stderr)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 || !strings.Contains(string(out), "github.com/leakbench/leakbench/scenarios/engine\n") {
		t.Fatalf("go list -deps listed %d packages, not the binary's:\n%s", len(pkgs), out)
	}
	for _, p := range pkgs {
		if strings.Contains(p, "/internal/testing/") {
			t.Errorf("the product binary links %s (test support; only tests may import internal/testing)", p)
		}
	}
}
