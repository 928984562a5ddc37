package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizingFlagsRefused: --target-rate 0 or below, --replicas 0, and
// sizing a load-only run are usage errors, said before any load.
func TestSizingFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--target", "http://127.0.0.1:1/mcp", "--target-rate", "0", "--out", dir + "/a"}, "--target-rate 0"},
		{[]string{"run", "--target", "http://127.0.0.1:1/mcp", "--target-rate", "-3", "--out", dir + "/b"}, "--target-rate -3"},
		{[]string{"run", "--target", "http://127.0.0.1:1/mcp", "--replicas", "0", "--out", dir + "/c"}, "--replicas 0"},
		{[]string{"run", "--target", "http://127.0.0.1:1/mcp", "--target-rate", "50", "--out", dir + "/d"}, "give a probe DSN"},
		{[]string{"report", dir, "--replicas", "0"}, "--replicas 0"},
		{[]string{"capacity", "--target", "http://127.0.0.1:1/mcp", "--target-rate", "0", "--out", dir + "/e"}, "--target-rate 0"},
		{[]string{"capacity", "--target", "http://127.0.0.1:1/mcp", "--target-rate", "-1.5", "--out", dir + "/f"}, "--target-rate -1.5"},
		{[]string{"capacity", "--variant", "fixed", "--replicas", "0", "--out", dir + "/g"}, "--replicas 0"},
		{[]string{"capacity", "--target", "http://127.0.0.1:1/mcp", "--replicas", "2", "--out", dir + "/h"}, "give a probe DSN"},
		{[]string{"signoff", "--capacity", "--target-rate", "0", "--out", dir + "/i"}, "--target-rate 0"},
		{[]string{"signoff", "--profile", "capacity", "--replicas", "3", "--out", dir + "/j"}, "add --capacity"},
	} {
		code, _, stderr := runCLI(t, map[string]string{"LEAKBENCH_PROBE_DSN": ""}, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused run wrote %d entries into %s", len(entries), dir)
	}
}

// TestReportSizesAgain: report --target-rate R --replicas N sizes a
// recorded probed run for R and N, and the summary keeps them.
func TestReportSizesAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := exec.Command("cp", "-r", "../../reports/testdata/signoff/after", dir).Run(); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, nil, "report", dir, "--target-rate", "40", "--replicas", "3"); code != exitOK {
		t.Fatalf("report --target-rate 40 --replicas 3: exit %d\n%s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Sizing struct {
			Options struct {
				Target   float64 `json:"target_req_per_s"`
				Replicas int     `json:"replicas"`
			} `json:"options"`
			Inputs []struct {
				Name   string `json:"name"`
				Source string `json:"source"`
			} `json:"inputs"`
			Missing []string `json:"missing"`
		} `json:"sizing"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Sizing.Options.Target != 40 || s.Sizing.Options.Replicas != 3 {
		t.Errorf("summary.json sizing options: %+v; want 40 req/s, 3 replicas", s.Sizing.Options)
	}
	sources := map[string]string{}
	for _, in := range s.Sizing.Inputs {
		sources[in.Name] = in.Source
	}
	if sources["target rate R"] != "flag: --target-rate" || sources["replicas"] != "flag: --replicas" {
		t.Errorf("the flags are not the inputs' sources: %v", sources)
	}
	// This recorded run predates the hold's measurement: the sizing says
	// so instead of assuming one.
	if !strings.HasPrefix(sources["hold h"], "not measured") || len(s.Sizing.Missing) == 0 {
		t.Errorf("hold h: %q, missing %v; want it named as not measured", sources["hold h"], s.Sizing.Missing)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Sizing") {
		t.Error("report.md has no Sizing section")
	}
}
