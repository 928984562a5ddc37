package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/junit"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/plots"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden from the current output")

// The fixture is a real sign-off (profile ci) recorded on a 2-core machine,
// trimmed: no logs, and two in three of the sub-second released episodes
// dropped from episodes.jsonl.
const fixtureDir = "testdata/signoff"

func loadFixture(t testing.TB, name string) *Run {
	t.Helper()
	r, err := LoadRun(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// copyRun copies a fixture run directory so that rendering can write into
// it.
func copyRun(t *testing.T, name, dst string) string {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(fixtureDir, name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenRun(t *testing.T) {
	t.Setenv(StepSummaryEnv, "")
	dir := copyRun(t, "before", t.TempDir())
	if _, err := RenderRun(dir); err != nil {
		t.Fatal(err)
	}
	golden(t, "run.md", readFile(t, filepath.Join(dir, rundir.ReportFile)))
	golden(t, "run.summary.json", readFile(t, filepath.Join(dir, rundir.SummaryFile)))
	golden(t, "run.junit.xml", readFile(t, filepath.Join(dir, rundir.JUnitFile)))
	checkJUnit(t, readFile(t, filepath.Join(dir, rundir.JUnitFile)), 2)
	for _, p := range []string{plots.Stuck, plots.States, plots.Release, plots.PgBouncer} {
		for _, ext := range []string{plots.PNG, plots.SVG} {
			if _, err := os.Stat(filepath.Join(dir, rundir.PlotsDir, p+"."+ext)); err != nil {
				t.Error(err)
			}
		}
	}
	// The summary written reads back, with the derived pool state.
	again, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Pool == nil || again.Pool.Exhausted {
		t.Errorf("pool state %+v: want healthy (PgBouncer queued clients only for moments)", again.Pool)
	}
}

// TestWriteRunDerivesPoolState: the summary and report.md a run writes
// before its report is rendered (WriteRun, then Summary.WriteMarkdown to
// the terminal) carry the same derived pool state as the rendered report,
// not the probe's raw PgBouncer counts.
func TestWriteRunDerivesPoolState(t *testing.T) {
	dir := copyRun(t, "before", t.TempDir())
	s, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pool != nil {
		t.Fatal("the fixture's summary already has a pool state: the test shows nothing")
	}
	if err := WriteRun(dir, s); err != nil {
		t.Fatal(err)
	}
	if s.Pool == nil || s.Pool.Exhausted || !s.Pool.PgBouncerSampled {
		t.Fatalf("WriteRun left pool state %+v; want the derived, healthy one", s.Pool)
	}
	const row = "| Pool state / worst wait | healthy / worst wait 199 ms |"
	var md strings.Builder
	if err := WriteSummaryMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{rundir.ReportFile: string(readFile(t, filepath.Join(dir, rundir.ReportFile))), "WriteMarkdown": md.String()} {
		if !strings.Contains(text, row) {
			t.Errorf("%s lacks the derived pool row %q:\n%s", name, row, text)
		}
	}
	again, err := ReadRun(dir)
	if err != nil || again.Pool == nil || !reflect.DeepEqual(again.Pool, s.Pool) {
		t.Errorf("summary.json pool state %+v (%v), want %+v", again.Pool, err, s.Pool)
	}
}

// renderFixtureSignoff renders the recorded sign-off in a directory of its
// own, which it returns.
func renderFixtureSignoff(t *testing.T) (string, *Comparison) {
	t.Helper()
	out := t.TempDir()
	copyRun(t, "before", filepath.Join(out, "before"))
	copyRun(t, "after", filepath.Join(out, "after"))
	cmp, err := RenderSignoff(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, cmp
}

func TestGoldenSignoff(t *testing.T) {
	t.Setenv(StepSummaryEnv, "")
	out, cmp := renderFixtureSignoff(t)
	if !cmp.Pass {
		t.Errorf("verdict fails on the recorded sign-off: %+v", cmp.Checks)
	}
	golden(t, "compare.md", readFile(t, filepath.Join(out, rundir.ReportFile)))
	golden(t, "compare.json", readFile(t, filepath.Join(out, rundir.CompareFile)))
	golden(t, "compare.junit.xml", readFile(t, filepath.Join(out, rundir.JUnitFile)))
	checkJUnit(t, readFile(t, filepath.Join(out, rundir.JUnitFile)), 0)
	for _, f := range []string{"before/" + rundir.HTMLFile, "after/" + rundir.JUnitFile, rundir.HTMLFile, rundir.PlotsDir + "/" + plots.Release + ".png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	var back Comparison
	if err := json.Unmarshal(readFile(t, filepath.Join(out, rundir.CompareFile)), &back); err != nil || back.SchemaVersion != rundir.SchemaVersion {
		t.Errorf("compare.json: %v, schema_version %d", err, back.SchemaVersion)
	}
}

// TestGoldenForensics renders a seeded synthetic sign-off
// (synthetic.WriteRun) whose runs have what the recorded one lacks: the
// service pool's metrics, trace contexts joined to a request index, and
// a lock cascade, so that the report's pool, forensics-join and cascade
// sections are golden too. The goldens are checked for those sections
// besides: an -update from output that lost one would pass the byte
// comparison.
func TestGoldenForensics(t *testing.T) {
	t.Setenv(StepSummaryEnv, "")
	out := t.TempDir()
	if err := errors.Join(synthetic.WriteRun(filepath.Join(out, "before"), 1, true),
		synthetic.WriteRun(filepath.Join(out, "after"), 2, false)); err != nil {
		t.Fatal(err)
	}
	cmp, err := RenderSignoff(out)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Pass {
		t.Errorf("verdict fails on the synthetic sign-off: %+v", cmp.Checks)
	}
	before := filepath.Join(out, "before")
	run := readFile(t, filepath.Join(before, rundir.ReportFile))
	golden(t, "forensics-run.md", run)
	golden(t, "forensics-run.summary.json", readFile(t, filepath.Join(before, rundir.SummaryFile)))
	golden(t, "forensics-run.junit.xml", readFile(t, filepath.Join(before, rundir.JUnitFile)))
	compare := readFile(t, filepath.Join(out, rundir.ReportFile))
	golden(t, "forensics-compare.md", compare)
	golden(t, "forensics-compare.json", readFile(t, filepath.Join(out, rundir.CompareFile)))

	for _, want := range []string{
		"service pool at its max",               // the pool, from the service's metrics
		"Joined to the request that left them:", // the join to requests.jsonl
		"tools/call get_team_tools | timeout",   // a stuck episode's request, by tool and outcome
		"(not joined)",                          // a trace id not in the index
		"(no trace context)",                    // an episode without one
		"held** (released by the service, late", // held, not leaked
		"Blocked by stuck sessions: **",         // the cascade, summed
		"agents #",                              // a worst episode's user and iteration
		"after 1.0 s | 3, ",                     // the worst episode's own cascade
	} {
		if !bytes.Contains(run, []byte(want)) {
			t.Errorf("the synthetic run's report.md lacks %q: the section it stands for is not golden-tested", want)
		}
	}
	if !bytes.Contains(compare, []byte("Blocked by stuck sessions: **")) || !bytes.Contains(compare, []byte("Joined to the request that left them:")) {
		t.Errorf("the sign-off's report.md lacks the forensics of before:\n%s", compare)
	}
	s, err := ReadRun(before)
	if err != nil {
		t.Fatal(err)
	}
	f := s.Forensics
	switch {
	case s.Pool == nil || !s.Pool.AppPoolSampled || !s.Pool.Exhausted:
		t.Errorf("pool %+v: want the service pool sampled and exhausted", s.Pool)
	case f == nil || !f.RequestsIndexed || f.Joined == 0 || f.Joined >= f.Traced || f.Traced >= f.StuckEpisodes:
		t.Errorf("forensics %+v: want some stuck episodes joined, some traced but not joined, some untraced", f)
	case f.EpisodesBlocking == 0 || f.BlockedBackends <= f.EpisodesBlocking || f.BlockedWaitSeconds <= 0:
		t.Errorf("cascade: %d episodes blocked %d backends for %.1f s; want some blocking more than one", f.EpisodesBlocking, f.BlockedBackends, f.BlockedWaitSeconds)
	}
	if _, err := os.Stat(filepath.Join(before, rundir.PlotsDir, plots.AppPool+"."+plots.PNG)); err != nil {
		t.Errorf("no service pool plot: %v", err)
	}
}

// checkJUnit parses the XML and checks its counts add up.
func checkJUnit(t *testing.T, raw []byte, wantFailures int) {
	t.Helper()
	var doc junit.Document
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	tests, failures := 0, 0
	for _, s := range doc.Suites {
		tests += len(s.Cases)
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
		}
	}
	if tests != doc.Tests || failures != doc.Failures || failures != wantFailures {
		t.Errorf("junit: %d cases, %d failures; header says %d, %d; want %d failures", tests, failures, doc.Tests, doc.Failures, wantFailures)
	}
}

// TestIncompleteRun renders a run that was killed: no summary.json, and a
// last line torn in the middle of a write.
func TestIncompleteRun(t *testing.T) {
	t.Setenv(StepSummaryEnv, "")
	dir := copyRun(t, "before", t.TempDir())
	if err := os.Remove(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.SamplesFile, rundir.EpisodesFile} {
		b := readFile(t, filepath.Join(dir, f))
		if err := os.WriteFile(filepath.Join(dir, f), b[:len(b)*6/10], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := RenderRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Incomplete() || r.Summary.EndReason != rundir.EndIncomplete {
		t.Fatalf("incomplete = %v, end reason %q", r.Incomplete(), r.Summary.EndReason)
	}
	md := readFile(t, filepath.Join(dir, rundir.ReportFile))
	golden(t, "incomplete.md", md)
	html := readFile(t, filepath.Join(dir, rundir.HTMLFile))
	for _, want := range []string{"Incomplete run", "skipped 1 unreadable line"} {
		if !bytes.Contains(md, []byte(want)) || !bytes.Contains(html, []byte(want)) {
			t.Errorf("report.md or report.html lacks %q", want)
		}
	}
	if r.Summary.Probe == nil || r.Summary.Probe.StuckEpisodes == 0 || len(r.Summary.Probe.Culprits) == 0 {
		t.Errorf("rebuilt probe summary lost the leak: %+v", r.Summary.Probe)
	}
	// Rendering again reads the summary it wrote, still incomplete.
	r2, err := LoadRun(dir)
	if err != nil || !r2.Incomplete() {
		t.Fatalf("second read: %v, incomplete %v", err, r2 != nil && r2.Incomplete())
	}
	cmp := CompareRuns(r2, loadFixture(t, "after"))
	if cmp.Pass || cmp.Checks[0].Pass {
		t.Errorf("a sign-off with an incomplete before run passes: %+v", cmp.Checks[0])
	}
}

func TestNotARun(t *testing.T) {
	empty := t.TempDir()
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(other, "notes.txt")
	badSchema := t.TempDir()
	if err := os.WriteFile(filepath.Join(badSchema, rundir.SummaryFile), []byte(`{"schema_version": 99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, rundir.SummaryFile), []byte(`{"schema_version": 1,`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		want      error
		text      string
	}{
		{"empty directory", empty, ErrNotRun, "no summary.json"},
		{"unrelated files", other, ErrNotRun, "not a leakbench run"},
		{"a file", file, ErrNotRun, "it is a file"},
		{"missing", filepath.Join(empty, "nope"), fs.ErrNotExist, "nope"},
		{"newer schema", badSchema, nil, "schema version 99"},
		{"damaged summary", damaged, nil, "summary.json is damaged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RenderRun(tt.dir)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q does not say %q", err, tt.text)
			}
		})
	}
}

func TestStepSummary(t *testing.T) {
	sum := filepath.Join(t.TempDir(), "step-summary.md")
	t.Setenv(StepSummaryEnv, sum)
	dir := copyRun(t, "after", t.TempDir())
	for range 2 {
		if _, err := RenderRun(dir); err != nil {
			t.Fatal(err)
		}
	}
	got := string(readFile(t, sum))
	if n := strings.Count(got, "# leakbench run: after"); n != 2 {
		t.Errorf("step summary has the report %d times, want it appended twice", n)
	}
	if len(got) > 65536 {
		t.Errorf("step summary is %d bytes, too long for a comment", len(got))
	}
}
