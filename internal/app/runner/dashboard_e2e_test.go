package runner

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/testing/chromium"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/guides/dashboard-signoff.png from TestSignoffDashboardOnStack's page (needs chromium)")

// signoffShot is the docs' screenshot of a sign-off in progress.
const signoffShot = "../../../docs/guides/dashboard-signoff.png"

// TestSignoffDashboardOnStack is the dashboard end to end on the real
// stack: a sign-off of the reference gateway (PostgreSQL, PgBouncer and
// the gateway, local processes) with the sign-off's page attached. The
// page's stream carries both sides with their load and the database's
// figures, the leaky side with sessions idle in a transaction and stuck,
// the fixed one with none stuck, and the requests that left the leaky
// side's stuck sessions: while it plays (the live join), and at the end
// (the forensics'). With Chromium installed the page is
// loaded while the sign-off plays and, its after side playing,
// screenshot at a laptop's 1280×800 (into the docs with
// -update-screenshot).
func TestSignoffDashboardOnStack(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	if testing.Short() {
		t.Skip("integration test: two local stacks under load")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := dashboard.Start(ctx, dashboard.Config{Addr: "127.0.0.1:0", Title: "sign-off", View: dashboard.NewSignoffView()})
	if err != nil {
		t.Fatalf("start the dashboard: %v", err)
	}
	defer srv.Close()
	seen := watchStream(t, srv.URL()+"events")

	var b *chromium.Browser
	if _, ok := chromium.Path(); ok {
		b = chromium.Launch(t)
		b.Open(srv.URL())
		b.Viewport(1280, 800)
	} else if *updateScreenshot {
		t.Fatal("-update-screenshot needs chromium (or $CHROMIUM)")
	}
	out := t.TempDir()
	done := make(chan signoffResult, 1)
	p := shortProfile(t)
	go func() {
		cmp, err := Signoff(ctx, SignoffOptions{Profile: p, Out: out, Version: "test",
			Watch: func(side string) Watch { return srv.Part(side) }})
		done <- signoffResult{cmp, err}
	}()
	shot := ""
	if b != nil {
		shot = screenshotAfterSide(t, b, done)
	}
	r := <-done
	if errors.Is(r.err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", r.err)
	}
	if r.err != nil {
		t.Fatalf("signoff: %v", r.err)
	}
	srv.Finish(out)
	points, last, liveBefore := seen()

	// Both sides' points carry the load and the database.
	withDB := map[string]int{}
	for _, p := range points {
		if p.Load != nil && p.DB != nil {
			withDB[p.Part]++
		}
	}
	if withDB["before"] == 0 || withDB["after"] == 0 {
		t.Errorf("points with load and database figures by side: %v; want both before and after", withDB)
	}
	if last.View == nil || len(last.View.Sides) != 2 {
		t.Fatalf("the page's last panel %+v: want the sign-off's two sides", last.View)
	}
	before, after := last.View.Sides[0], last.View.Sides[1]
	if before.Name != "before" || before.Requests == 0 || before.PeakIdleInTx == 0 || before.PeakStuck == 0 || before.StuckEpisodes == 0 {
		t.Errorf("before (commit-in-finally): %+v; want its load, sessions idle in a transaction and stuck", before)
	}
	if after.Name != "after" || after.Requests == 0 || after.PeakStuck != 0 {
		t.Errorf("after (fixed): %+v; want its load and no session stuck", after)
	}
	if r.cmp.Before.Probe.TimeoutTerminated == 0 {
		t.Errorf("the sign-off's own before side saw no session killed by the timeout: the page's leak is not the run's")
	}
	// At the end the page names the requests that left the leaky side's
	// stuck sessions: the forensics' own join, as many as it made.
	joined, want := 0, 0
	for _, l := range last.LeftBy {
		if l.Run == "before" && l.Request != nil {
			joined++
		}
	}
	if f := r.cmp.Before.Forensics; f != nil {
		for _, w := range f.Worst {
			if w.Request != nil {
				want++
			}
		}
	}
	if joined != want || want == 0 {
		t.Errorf("the page names %d requests that left before's stuck sessions, the forensics joined %d of its worst (want them all, and some)", joined, want)
	}
	// And while it played: the live join of the probe's stuck episodes
	// to the requests the engine wrote so far (dashboard/livejoin.go).
	t.Logf("requests that left before's stuck sessions: %d named live, %d by the forensics at the end", liveBefore, want)
	if liveBefore == 0 {
		t.Errorf("no request that left before's stuck sessions was named while the sign-off played (the forensics joined %d at the end)", want)
	}
	if b == nil {
		t.Log("chromium not installed: the page was not loaded, and no screenshot taken")
		return
	}
	var rows int
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		b.Eval(`document.querySelectorAll('#t-leftby tr').length`, &rows)
		if rows > want {
			break
		}
	}
	if rows != len(last.LeftBy)+1 {
		t.Errorf("the page's table of requests that left the stuck sessions has %d rows, want a heading and %d", rows, len(last.LeftBy))
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", msgs)
	}
	if shot == "" {
		t.Error("the page never showed the after side playing beside the before side: no screenshot")
	}
}

// signoffResult is what Signoff returned.
type signoffResult struct {
	cmp *reports.Comparison
	err error
}

// screenshotAfterSide waits until the page in b draws both sides, the
// after side a few seconds into its load, and screenshots it: into the
// docs with -update-screenshot, else into a temporary file. It returns
// the file, "" when the sign-off ended first (its result is put back).
func screenshotAfterSide(t *testing.T, b *chromium.Browser, done chan signoffResult) string {
	t.Helper()
	for {
		select {
		case r := <-done:
			done <- r
			return ""
		case <-time.After(500 * time.Millisecond):
		}
		var n struct{ Before, After int }
		b.Eval(`(() => { const l = window.leakbench; if (!l) return {};
			const s = l.sideCharts(), n = (k) => s[k] ? s[k].load.data.datasets[1].data.length : 0;
			return {Before: n('before'), After: n('after')}; })()`, &n)
		if n.Before == 0 || n.After < 4 {
			continue
		}
		shot := filepath.Join(t.TempDir(), "dashboard-signoff.png")
		if *updateScreenshot {
			shot = signoffShot
		}
		b.Screenshot(shot, true)
		if err := chromium.ShrinkPNG(shot); err != nil {
			t.Error(err)
		}
		return shot
	}
}

// watchStream reads the page's event stream as a browser would, until
// the run is done or the stream ends; the func it returns waits for that
// and gives every point and the last state the stream carried.
func watchStream(t *testing.T, url string) func() ([]dashboard.Point, dashboard.State, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("open the page's stream: %v", err)
	}
	var (
		wg     sync.WaitGroup
		points []dashboard.Point
		last   dashboard.State
		// liveBefore is the most requests named live (a tick's state,
		// before the end) as having left before's stuck sessions.
		liveBefore int
	)
	var readErr error
	wg.Go(func() {
		defer resp.Body.Close()
		readErr = dashboard.ReadEvents(resp.Body, func(ev dashboard.Event) bool {
			points = append(points, ev.Points...)
			if ev.State == nil {
				return true
			}
			last = *ev.State
			if ev.Name == "tick" || ev.Name == "history" { // live: not the end's panel
				n := 0
				for _, l := range last.LeftBy {
					if l.Run == "before" && l.Request != nil {
						n++
					}
				}
				liveBefore = max(liveBefore, n)
			}
			return true
		})
	})
	return func() ([]dashboard.Point, dashboard.State, int) {
		wg.Wait()
		if readErr != nil {
			t.Errorf("the page's stream: %v", readErr)
		}
		return points, last, liveBefore
	}
}
