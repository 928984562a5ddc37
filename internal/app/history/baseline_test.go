package history

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
)

func TestCompareFigures(t *testing.T) {
	base := Figures{ProbeRecorded: true, LoadRecorded: true, ReleaseP99Seconds: 0.160, MaxStuckIdleInTx: 0,
		AppPoolAcquireWaits: 30, PoolWorstWaitSeconds: 0.1, RequestRate: 170, ErrorRate: 0.001, LatencyP99Ms: 600}
	tests := []struct {
		name      string
		mod       func(*Figures)
		regressed []string
	}{
		{"same", func(*Figures) {}, nil},
		{"release p99 ×2 but under the 250 ms floor", func(f *Figures) { f.ReleaseP99Seconds = 0.400 }, nil},
		{"release p99 ×2.5, just under the floor", func(f *Figures) { f.ReleaseP99Seconds = 0.405 }, nil},
		{"release p99 both", func(f *Figures) { f.ReleaseP99Seconds = 0.450 }, []string{"release_p99_seconds"}},
		{"one stuck session where there was none", func(f *Figures) { f.MaxStuckIdleInTx = 1 }, []string{"max_stuck_idle_in_tx"}},
		{"pool waits doubled but under the floor", func(f *Figures) { f.AppPoolAcquireWaits = 45 }, nil},
		{"pool waits", func(f *Figures) { f.AppPoolAcquireWaits = 61 }, []string{"app_pool_acquire_waits"}},
		{"PgBouncer waits", func(f *Figures) { f.PoolWorstWaitSeconds = 0.4 }, []string{"pool_worst_wait_seconds"}},
		{"request rate up is fine", func(f *Figures) { f.RequestRate = 400 }, nil},
		{"request rate down 15%", func(f *Figures) { f.RequestRate = 145 }, nil},
		{"request rate down 30%", func(f *Figures) { f.RequestRate = 119 }, []string{"request_rate_per_second"}},
		{"error rate ×5 but under 1 point", func(f *Figures) { f.ErrorRate = 0.005 }, nil},
		{"error rate", func(f *Figures) { f.ErrorRate = 0.03 }, []string{"error_rate"}},
		{"latency p99", func(f *Figures) { f.LatencyP99Ms = 1300 }, []string{"latency_p99_ms"}},
		{"everything better", func(f *Figures) { *f = Figures{ProbeRecorded: true, LoadRecorded: true, RequestRate: 200} }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base
			tt.mod(&cur)
			var got []string
			for _, d := range CompareFigures(base, cur, DefaultRules()) {
				if d.Regressed {
					got = append(got, d.Figure)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.regressed, ",") {
				t.Errorf("regressed %v, want %v", got, tt.regressed)
			}
		})
	}
}

func TestCompareFiguresSkipsWhatWasNotMeasured(t *testing.T) {
	base := Figures{LoadRecorded: true, RequestRate: 100}
	cur := Figures{ProbeRecorded: true, LoadRecorded: true, RequestRate: 10, ReleaseP99Seconds: 100}
	for _, d := range CompareFigures(base, cur, DefaultRules()) {
		probe := d.Figure != "request_rate_per_second" && d.Figure != "error_rate" && d.Figure != "latency_p95_ms" && d.Figure != "latency_p99_ms"
		if d.Skipped != probe {
			t.Errorf("%s: skipped %v", d.Figure, d.Skipped)
		}
		if d.Figure == "request_rate_per_second" && !d.Regressed {
			t.Errorf("request rate 100 → 10 not a regression")
		}
	}
}

func TestSetRule(t *testing.T) {
	rules := DefaultRules()
	if err := SetRule(rules, "release_p99_seconds=3:0.5"); err != nil {
		t.Fatal(err)
	}
	base := Figures{ProbeRecorded: true, ReleaseP99Seconds: 0.2}
	cur := Figures{ProbeRecorded: true, ReleaseP99Seconds: 0.5}
	for _, d := range CompareFigures(base, cur, rules) {
		if d.Figure == "release_p99_seconds" && d.Regressed {
			t.Error("0.2 → 0.5 s regressed under 3×/+0.5 s")
		}
	}
	for _, bad := range []string{"release_p99_seconds", "release_p99_seconds=2", "nope=2:1", "release_p99_seconds=0.5:1", "error_rate=2:-1", "error_rate=x:1"} {
		if err := SetRule(rules, bad); !errors.Is(err, ErrRule) {
			t.Errorf("SetRule(%q) = %v, want ErrRule", bad, err)
		}
	}
}

func entryOf(id, profile, variant string, pass bool) *Entry {
	return &Entry{ID: id, Profile: profile, Pass: pass, Environment: Environment{Variant: variant}}
}

func TestSelectBaseline(t *testing.T) {
	entries := []*Entry{
		entryOf("20261201T080000.000000001Z-aaaaaaaaaaaa", "ci", "fixed", true),
		entryOf("20261201T090000.000000001Z-bbbbbbbbbbbb", "ci", "fixed", true),
		entryOf("20261201T100000.000000001Z-cccccccccccc", "ci", "fixed", false),
		entryOf("20261201T110000.000000001Z-dddddddddddd", "incident", "fixed", true),
		entryOf("20261201T120000.000000001Z-eeeeeeeeeeee", "ci", "commit-in-finally", true),
	}
	tests := []struct {
		ref, profile, variant, want string
		err                         error
	}{
		{"last", "ci", "fixed", "20261201T090000.000000001Z-bbbbbbbbbbbb", nil},
		{"last", "incident", "fixed", "20261201T110000.000000001Z-dddddddddddd", nil},
		{"last", "smoke", "fixed", "", nil},
		{"20261201T100000.000000001Z-cccccccccccc", "ci", "fixed", "20261201T100000.000000001Z-cccccccccccc", nil},
		{"20261201T08", "ci", "fixed", "20261201T080000.000000001Z-aaaaaaaaaaaa", nil},
		{"20261201T", "ci", "fixed", "", ErrNotFound},
		{"20251201T080000.000000001Z-aaaaaaaaaaaa", "ci", "fixed", "", ErrNotFound},
	}
	for _, tt := range tests {
		got, err := SelectBaseline(entries, tt.ref, tt.profile, tt.variant)
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: err %v, want %v", tt.ref, err, tt.err)
			continue
		}
		id := ""
		if got != nil {
			id = got.ID
		}
		if id != tt.want {
			t.Errorf("%s %s %s: %q, want %q", tt.ref, tt.profile, tt.variant, id, tt.want)
		}
	}
}

func TestJudgeAndReports(t *testing.T) {
	base := fixtureEntry(t)
	base.ID, base.Release, base.Pass = "20261201T080000.000000001Z-aaaaaaaaaaaa", "v1.0", true
	cur := fixtureEntry(t)
	cur.Figures.ReleaseP99Seconds = 2.5
	cur.Figures.RequestRate = 50
	cur.Environment.Provider = "docker"
	b := Judge("last", base, cur, DefaultRules())
	if !b.Regressed || len(b.Regressions()) != 2 {
		t.Fatalf("regressions: %+v", b.Regressions())
	}
	if !strings.Contains(b.Note, `provider differs: baseline "local", now "docker"`) {
		t.Errorf("note: %q", b.Note)
	}
	v := b.Verdict()
	for _, want := range []string{"REGRESSED", "Connection release p99 1.08 s → 2.50 s (+1.42 s (×2.31))", "Request rate 148.1/s → 50.0/s"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict %q lacks %q", v, want)
		}
	}
	var md, txt, junit bytes.Buffer
	if err := b.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteTable(&txt); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| Connection release p99 | 1.08 s | 2.50 s | +1.42 s (×2.31) | REGRESSED |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if !strings.Contains(txt.String(), "REGRESSED") || !strings.Contains(txt.String(), "v1.0") {
		t.Errorf("table:\n%s", txt.String())
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &suite); err != nil {
		t.Fatal(err)
	}
	if suite.Tests != len(DefaultRules()) || suite.Failures != 2 {
		t.Errorf("junit: %d tests, %d failures", suite.Tests, suite.Failures)
	}

	// No baseline yet: no regression, and the reports say so.
	first := Judge("last", nil, cur, DefaultRules())
	if first.Regressed || first.ID != "" || !strings.Contains(first.Verdict(), "no baseline") {
		t.Errorf("first run: %+v", first)
	}
	md.Reset()
	junit.Reset()
	if err := first.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "No baseline") {
		t.Errorf("first run markdown %q, %v", md.String(), err)
	}
	if err := first.WriteJUnit(&junit); err != nil || !strings.Contains(junit.String(), "<skipped") {
		t.Errorf("first run junit %q, %v", junit.String(), err)
	}
}

// A delta read back from JSON formats as one made in this process.
func TestDeltaTextAfterJSON(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := fixtureEntry(t)
	cur := fixtureEntry(t)
	cur.Figures.ErrorRate = 0.5
	cur.Baseline = Judge("last", base, cur, DefaultRules())
	if _, err := st.Append(cur); err != nil {
		t.Fatal(err)
	}
	entries, _, _ := st.List()
	var before, after bytes.Buffer
	_ = cur.Baseline.WriteMarkdown(&before)
	_ = entries[0].Baseline.WriteMarkdown(&after)
	if before.String() != after.String() {
		t.Errorf("markdown differs after a round trip:\n%s\n---\n%s", before.String(), after.String())
	}
}

func TestResolveRelease(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, "git is not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "f")
	git("commit", "-q", "-m", "one")
	git("tag", "v2.3.0")
	noRepo := t.TempDir()
	ctx := context.Background()
	old := getenv
	t.Cleanup(func() { getenv = old })
	env := map[string]string{}
	getenv = func(k string) string { return env[k] }

	tests := []struct {
		flag, envv, dir, label, source string
	}{
		{"v9 rc1", "from-env", repo, "v9 rc1", ReleaseFlag},
		{"", "build-77", repo, "build-77", ReleaseEnv},
		{"", "", repo, "v2.3.0", ReleaseGit},
		{"", "", noRepo, "unknown", ReleaseUnknown},
		{"https://ci:s3cr3tt0ken@example.invalid/r", "", repo, "https://ci:xxxxx@example.invalid/r", ReleaseFlag},
	}
	if _, err := exec.Command("git", "-C", noRepo, "rev-parse").CombinedOutput(); err == nil {
		t.Skip("the temporary directory is inside a git work tree")
	}
	for _, tt := range tests {
		env[ReleaseEnvVar] = tt.envv
		label, source := ResolveRelease(ctx, tt.flag, tt.dir)
		if label != tt.label || source != tt.source {
			t.Errorf("ResolveRelease(%q, env %q, %s) = %q, %q; want %q, %q", tt.flag, tt.envv, tt.dir, label, source, tt.label, tt.source)
		}
	}
	// A change in the work tree shows.
	if err := os.WriteFile(filepath.Join(repo, "f"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	env[ReleaseEnvVar] = ""
	if label, _ := ResolveRelease(ctx, "", repo); label != "v2.3.0-dirty" {
		t.Errorf("dirty tree: %q", label)
	}
}

// TestPoolPinnedFigure: pool_pinned_seconds is the longest pinned time of
// either view — the database's (a service's connections pinned) or the
// service's own pool at its max while acquires waited.
func TestPoolPinnedFigure(t *testing.T) {
	for _, tt := range []struct {
		name string
		pool rundir.PoolState
		want float64
	}{
		{"database view", rundir.PoolState{Services: []rundir.ServiceConns{{Name: "a", PinnedSeconds: 2}, {Name: "b", PinnedSeconds: 5}}}, 5},
		{"service pool with waits", rundir.PoolState{AppPoolSaturatedSeconds: 8, AppPoolAcquireWaits: 3, Services: []rundir.ServiceConns{{Name: "a", PinnedSeconds: 5}}}, 8},
		{"service pool at its max, nobody waiting", rundir.PoolState{AppPoolSaturatedSeconds: 8}, 0},
	} {
		pool := tt.pool
		if got := FiguresOfSummary(&rundir.Summary{Pool: &pool}).PoolPinnedSeconds; got != tt.want {
			t.Errorf("%s: pool_pinned_seconds %g, want %g", tt.name, got, tt.want)
		}
	}
}
