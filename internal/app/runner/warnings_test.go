package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

// TestRunPrintsPlanWarnings: a ping step under protocolVersion auto (it
// fails on every 2026-07-28 server) is a warning naming the file and line,
// printed before any load; a plan pinned to 2025 has none (#26).
func TestRunPrintsPlanWarnings(t *testing.T) {
	target := mcptest.Start(t, mcptest.Options{SSE: true}).URL
	for _, tc := range []struct {
		name, version string
		warn          bool
	}{{"auto", "auto", true}, {"pinned", "2025-06-18", false}} {
		t.Run(tc.name, func(t *testing.T) {
			file := "scenarios:\n  s:\n    executor: constant-vus\n    vus: 1\n    duration: 300ms\n    protocolVersion: " + tc.version + "\n    flow:\n      - tools/list\n      - ping\n"
			p, err := profiles.Parse([]byte(file), "ping.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			_, err = Run(context.Background(), Options{Profile: p, Name: "w", Dir: t.TempDir(), Env: "external", Log: &log,
				External: fixtures.External{GatewayURL: target}})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, &log)
			}
			out := log.String()
			i, j := strings.Index(out, "warning: ping.yaml:9: "), strings.Index(out, "load only")
			if tc.warn && (i < 0 || j < 0 || i > j || !strings.Contains(out, "pin a 2025 version")) {
				t.Errorf("want the ping warning with its file and line before the load; log:\n%s", out)
			}
			if !tc.warn && strings.Contains(out, "warning:") {
				t.Errorf("a 2025 pin warned:\n%s", out)
			}
		})
	}
}
