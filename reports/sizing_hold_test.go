package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/sizing"
)

// TestSizingSaysCounterReset: a run whose pg_stat_database counters went
// back mid-run (probe.hold.excluded_reset) is sized from the windows the
// hold kept, and summary.json and both reports say how many were left out
// and why; a run without one says nothing of it.
func TestSizingSaysCounterReset(t *testing.T) {
	for _, resets := range []int{0, 2} {
		t.Run(fmt.Sprint(resets), func(t *testing.T) {
			s := synthetic.SizingSummary()
			s.Probe.Hold.ExcludedReset = resets
			s.Probe.DatabaseResets = resets
			dir := sizingRun(t, s, synthetic.LoadPoints(30))
			sz, err := SizeRun(dir, sizing.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%d windows between two of its reads left out of the hold", resets)
			said := func(where, text string) {
				t.Helper()
				if got := strings.Contains(text, want); got != (resets > 0) || strings.Contains(text, "counters went back") != (resets > 0) {
					t.Errorf("%s says the reset: %v; want %v (%d resets):\n%s", where, got, resets > 0, resets, text)
				}
			}
			said("sizing.notes", strings.Join(sz.Notes, "\n"))
			raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var js struct {
				Sizing struct {
					Notes []string `json:"notes"`
				} `json:"sizing"`
			}
			if err := json.Unmarshal(raw, &js); err != nil {
				t.Fatal(err)
			}
			said("summary.json", strings.Join(js.Sizing.Notes, "\n"))
			for _, f := range []string{"report.md", "report.html"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				said(f, string(b))
			}
		})
	}
}

// TestSizingPerApplication: each application the database told apart
// gets its share of the busy backends as a measured input, with why
// there is no hold per application; the shares are the hold's own.
func TestSizingPerApplication(t *testing.T) {
	s := synthetic.SizingSummary()
	s.Probe.Hold.Apps = []rundir.AppBusy{{Name: "gateway", BusyBackendsMean: 1.5}, {Name: "10.0.0.7", ByAddress: true, BusyBackendsMean: 0.5}}
	dir := sizingRun(t, s, synthetic.LoadPoints(30))
	sz, err := SizeRun(dir, sizing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range s.Probe.Hold.Apps {
		in, ok := input(sz, "busy backends of "+app.Name)
		if !ok || in.Value == nil || *in.Value != app.BusyBackendsMean || !strings.HasPrefix(in.Source, "measured: pg_stat_activity") ||
			!strings.Contains(in.Source, "no hold per application: pg_stat_database counts transactions per database") {
			t.Errorf("%s: input %+v; want its %g busy backends, measured, saying why there is no hold of its own", app.Name, in, app.BusyBackendsMean)
		}
	}
	if in, _ := input(sz, "busy backends of 10.0.0.7"); !strings.Contains(in.Source, "by client address") {
		t.Errorf("an application told apart by address: %q", in.Source)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| busy backends of gateway | 1.5 connections | measured: pg_stat_activity by application_name") {
		t.Errorf("report.md lacks the application's row:\n%s", md)
	}
}
