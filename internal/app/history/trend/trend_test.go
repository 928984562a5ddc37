package trend

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// seeded makes a history of six releases of the ci profile's after run —
// v1.0 to v1.5, v1.3 regressed (release p99 and stuck sessions) and failed —
// plus two entries of another profile and variant, deterministically.
func seeded() []*history.Entry {
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var out []*history.Entry
	add := func(release, profile, variant string, pass bool, f history.Figures) {
		i := len(out)
		rec := at.Add(time.Duration(i) * 24 * time.Hour)
		e := &history.Entry{
			Format: history.Format, FormatVersion: history.FormatVersion,
			ID:       rec.Format("20060102T150405.000000000Z") + fmt.Sprintf("-%012x", i+1),
			Recorded: rec, Kind: history.KindSignoff, Release: release, ReleaseSource: history.ReleaseFlag,
			Profile: profile, Pass: pass, VerdictPass: pass,
			Environment: history.Environment{Provider: "local", Variant: variant},
			Figures:     f,
		}
		out = append(out, e)
	}
	fig := func(p99, rate float64, stuck int, waits float64) history.Figures {
		return history.Figures{EndReason: "completed", ProbeRecorded: true, LoadRecorded: true, Episodes: 500,
			ReleaseP50Seconds: p99 / 3, ReleaseP99Seconds: p99, ReleaseMaxSeconds: p99 * 1.4,
			MaxStuckIdleInTx: stuck, StuckEpisodes: stuck * 3, AppPoolAcquireWaits: waits, PoolWorstWaitSeconds: 0.1,
			Requests: int64(rate * 20), RequestRate: rate, ErrorRate: 0.001, LatencyP95Ms: 90, LatencyP99Ms: 600}
	}
	add("v1.0", "ci", "fixed", true, fig(0.16, 170, 0, 10))
	add("v1.1", "ci", "fixed", true, fig(0.18, 168, 0, 12))
	add("v1.1", "incident", "fixed", true, fig(0.3, 900, 0, 50))
	add("v1.2", "ci", "fixed", true, fig(0.15, 175, 0, 9))
	add("v1.3", "ci", "fixed", false, fig(2.5, 120, 4, 80))
	out[len(out)-1].Baseline = history.Judge("last", out[len(out)-2], out[len(out)-1], history.DefaultRules())
	add("v1.3", "ci", "commit-in-finally", false, fig(5, 30, 30, 400))
	add("v1.4", "ci", "fixed", true, fig(0.17, 171, 0, 11))
	add("v1.5 <script>alert(1)</script>", "ci", "fixed", true, history.Figures{EndReason: "completed", LoadRecorded: true, RequestRate: 172, LatencyP95Ms: 88, LatencyP99Ms: 590})
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

func TestSelection(t *testing.T) {
	tr, err := New(seeded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Profile != "ci" || tr.Variant != "fixed" || len(tr.Entries) != 6 {
		t.Fatalf("profile %s variant %s, %d entries", tr.Profile, tr.Variant, len(tr.Entries))
	}
	// The newest passing entry is the baseline: the last one, v1.5.
	if tr.Baseline != 5 {
		t.Errorf("baseline index %d, want 5", tr.Baseline)
	}
	if len(tr.Left) != 2 {
		t.Errorf("left out: %v", tr.Left)
	}
	tr, err = New(seeded(), Options{Baseline: "20261122T"})
	if err == nil {
		t.Errorf("baseline of another profile accepted: index %d", tr.Baseline)
	}
	tr, err = New(seeded(), Options{Baseline: "20261121T090000.000000000Z-000000000002"})
	if err != nil || tr.Baseline != 1 {
		t.Errorf("baseline by ID: %v, index %d", err, tr.Baseline)
	}
	tr, err = New(seeded(), Options{Baseline: "none", Profile: "incident"})
	if err != nil || tr.Baseline != -1 || len(tr.Entries) != 1 {
		t.Errorf("incident: %v", err)
	}
	if _, err := New(seeded(), Options{Profile: "smoke"}); !errors.Is(err, ErrEmpty) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := New(nil, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty history: %v", err)
	}
}

var svgElement = regexp.MustCompile(`(?s)<svg.*?</svg>`)

func TestWrite(t *testing.T) {
	tr, err := New(seeded(), Options{Baseline: "20261123T090000.000000000Z-000000000004"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tr.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "trend.md", md)
	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)

	// Self-contained: a policy that forbids every load, and nothing that
	// would load something.
	if !strings.Contains(html, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`) {
		t.Error("no Content-Security-Policy")
	}
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "url(", ` src=`, `href="http`} {
		if strings.Contains(html, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	if !strings.Contains(html, "v1.5 &lt;script&gt;") {
		t.Error("release label not escaped")
	}
	// One inline SVG per plot, the baseline drawn in each.
	svgs := svgElement.FindAllString(html, -1)
	if len(svgs) != len(Plots()) {
		t.Errorf("%d inline SVGs, want %d", len(svgs), len(Plots()))
	}
	for i, s := range svgs {
		if !strings.Contains(s, "baseline: v1.2") {
			t.Errorf("plot %d does not mark the baseline", i)
		}
	}
	if !strings.Contains(html, `<tr class="baseline" id="20261123T090000.000000000Z-000000000004">`) {
		t.Error("baseline row not marked")
	}
	if !strings.Contains(html, "FAIL (regressed: Connection release p99, Stuck idle in transaction (max at one instant), Service pool acquires that waited, Request rate)") {
		t.Error("regressed entry not named")
	}
	golden(t, "trend.html", []byte(svgElement.ReplaceAllString(html, "<svg>…</svg>")))

	for _, p := range Plots() {
		f, err := os.Open(filepath.Join(dir, rundir.PlotsDir, p.Name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", p.Name, err)
		} else if img.Bounds().Dx() < 600 {
			t.Errorf("%s.png is %d px wide", p.Name, img.Bounds().Dx())
		}
		svg, err := os.ReadFile(filepath.Join(dir, rundir.PlotsDir, p.Name+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg: %v", p.Name, err)
		}
	}
}

// The same history draws the same SVG: the plots are deterministic.
func TestPlotsDeterministic(t *testing.T) {
	tr, err := New(seeded(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Plots() {
		var a, b bytes.Buffer
		if err := tr.WritePlot(&a, p.Name, FormatSVG); err != nil {
			t.Fatal(err)
		}
		if err := tr.WritePlot(&b, p.Name, FormatSVG); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two drawings differ", p.Name)
		}
	}
	if err := tr.WritePlot(&bytes.Buffer{}, "nope", FormatSVG); err == nil {
		t.Error("unknown plot drawn")
	}
	if err := tr.WritePlot(&bytes.Buffer{}, "release", "gif"); err == nil {
		t.Error("unknown format drawn")
	}
}

func BenchmarkWrite(b *testing.B) {
	entries := seeded()
	for len(entries) < 200 {
		entries = append(entries, seeded()...)
	}
	tr, err := New(entries, Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for b.Loop() {
		if err := tr.Write(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOwnServiceRuns: the runs of the user's own service (run --target,
// recorded with --history: kind run, no variant) are a trend of their
// own beside the sign-offs, named by the service, their baseline the
// newest passing one, every plot drawn.
func TestOwnServiceRuns(t *testing.T) {
	entries := seeded()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, pass := range []bool{true, true, false} {
		rec := at.Add(time.Duration(i) * time.Hour)
		entries = append(entries, &history.Entry{Format: history.Format, FormatVersion: history.FormatVersion,
			ID: rec.Format("20060102T150405.000000000Z") + fmt.Sprintf("-%012x", 100+i), Recorded: rec, Kind: history.KindRun,
			Release: fmt.Sprintf("pr-%d", i), Profile: "leakbench.yaml", Pass: pass, VerdictPass: pass,
			Environment: history.Environment{Provider: "external", Target: "http://127.0.0.1:8000/mcp"},
			Figures: history.Figures{EndReason: "completed", ProbeRecorded: true, LoadRecorded: true, ReleaseP99Seconds: 0.01 + float64(i),
				RequestRate: 40, LatencyP95Ms: 30, LatencyP99Ms: 50}})
	}
	tr, err := New(entries, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != 3 || tr.Service != "http://127.0.0.1:8000/mcp" || tr.Baseline != 1 || !strings.Contains(tr.Title, "your service (http://127.0.0.1:8000/mcp)") {
		t.Fatalf("trend of the own service: %d entries, service %q, baseline %d, title %q", len(tr.Entries), tr.Service, tr.Baseline, tr.Title)
	}
	dir := t.TempDir()
	if err := tr.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "trend.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "3 entries of profile `leakbench.yaml`, your own service `http://127.0.0.1:8000/mcp`") || strings.Count(string(md), "| run |") != 3 {
		t.Errorf("trend.md:\n%s", md)
	}
	for _, p := range Plots() {
		if st, err := os.Stat(filepath.Join(dir, rundir.PlotsDir, p.Name+".png")); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", p.Name, err)
		}
	}
}
