package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissing runs a child test that calls Missing, once without and once
// with RequireVar, and checks that the first skipped and the second failed.
func TestMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Missing(t, "widget not installed")
		return
	}
	for _, tt := range []struct {
		require string
		wantErr bool
		want    string
	}{
		{"", false, "--- SKIP"},
		{"0", false, "--- SKIP"},
		{"1", true, "--- FAIL"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", RequireVar+"="+tt.require)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tt.wantErr || !strings.Contains(string(out), tt.want) || !strings.Contains(string(out), "widget not installed") {
			t.Errorf("%s=%q: err %v, output:\n%s\nwant %s with the reason", RequireVar, tt.require, err, out, tt.want)
		}
	}
}
