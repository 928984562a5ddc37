package dashboard

// The page in Debian's Chromium, headless (internal/testing/chromium).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/chromium"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// TestPageInChromium: a page opened late shows the history, gains a
// point a second, charts them, shows the figures the server sent, and
// says nothing on its console; the exported page shows the same points
// from a file, with no server.
func TestPageInChromium(t *testing.T) {
	s, f := startFake(t, Config{Title: "fixed"})
	// Joins late: two points are already taken.
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		n := len(f.snaps)
		f.mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	b := chromium.Launch(t)
	b.Open(s.URL())
	first := b.WaitPoints(2, 10*time.Second)
	if first < 2 {
		t.Fatalf("the page holds %d points, want the 2 of its history", first)
	}
	if later := b.WaitPoints(first+2, 5*time.Second); later < first+2 {
		t.Fatalf("the page went from %d to %d points in 5s, want a point a second", first, later)
	}
	var drawn struct{ States, Held, Load, Apps int }
	b.Eval(`(() => { const c = window.leakbench.charts; return {States: c.states.data.datasets[0].data.length,
		Held: c.held.data.datasets[2].data.length, Load: c.load.data.datasets[0].data.length, Apps: c.apps.data.datasets.length}; })()`, &drawn)
	if drawn.States < first+2 || drawn.Held < first+2 || drawn.Load < first+2 || drawn.Apps != 1 {
		t.Errorf("charted points: %+v, want %d or more in each, one application", drawn, first+2)
	}
	// The page's last point is the server's: what the live stats held
	// when it was taken.
	var last Point
	b.Eval("window.leakbench.last()", &last)
	f.mu.Lock()
	snap, st := f.snaps[last.Seq-1], f.samples[last.Seq-1]
	f.mu.Unlock()
	if last.Load.Users != snap.Scenarios[0].VUs || last.Load.Requests != snap.Series[0].Requests || last.DB.Stuck != st.Sample.StuckIdleInTx {
		t.Errorf("the page's point %d: %+v %+v; the live stats: %+v, stuck %d", last.Seq, last.Load, last.DB, snap.Scenarios[0], st.Sample.StuckIdleInTx)
	}
	var tiles string
	b.Eval("document.getElementById('tiles').innerText", &tiles)
	if want := fmt.Sprint(snap.Scenarios[0].VUs); !bytes.Contains([]byte(tiles), []byte(want+"\nusers")) {
		t.Errorf("the tiles do not show %s users: %q", want, tiles)
	}
	// A reload starts from the server's whole history: nothing lost,
	// nothing counted twice.
	held := b.Points()
	b.Call("Page.reload", map[string]any{}, nil)
	time.Sleep(300 * time.Millisecond) // the reload replaces the old page's script
	if got := b.WaitPoints(held, 10*time.Second); got < held {
		t.Errorf("after a reload the page holds %d points, it held %d", got, held)
	}
	var after struct{ N, Seq int }
	b.Eval("(() => ({N: window.leakbench.points(), Seq: window.leakbench.last().seq}))()", &after)
	if after.Seq != after.N {
		t.Errorf("after a reload the last point is seq %d of %d points: points lost or doubled", after.Seq, after.N)
	}
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	if p := os.Getenv("LEAKBENCH_DASHBOARD_SCREENSHOT"); p != "" {
		shot = p // for the docs
	}
	b.Screenshot(shot, false)
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", msgs)
	}

	s.Finish("")
	export := filepath.Join(t.TempDir(), "dash.html")
	if err := s.ExportFile(export); err != nil {
		t.Fatal(err)
	}
	want := len(s.history)
	s.Close() // the exported page needs no server
	b.Call("Page.navigate", map[string]any{"url": "file://" + export}, nil)
	time.Sleep(300 * time.Millisecond) // the navigation replaces the old page's script
	if got := b.WaitPoints(want, 10*time.Second); got != want {
		t.Errorf("the exported page holds %d points, the server had %d", got, want)
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", msgs)
	}
}

// TestChromiumSeesConsoleErrors proves the console check above can fail.
func TestChromiumSeesConsoleErrors(t *testing.T) {
	b := chromium.Launch(t)
	b.Open("data:text/html,<script>console.error('boom'); window.leakbench = {points: () => 1}</script>")
	b.WaitPoints(1, 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Console()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(b.Console()) == 0 {
		t.Error("console.error went unseen")
	}
}

// TestPageRaisesUsers: in Chromium, the page's control raises a real
// engine's externally-controlled users; the engine records the change as
// the page's, in load.jsonl and the result.
func TestPageRaisesUsers(t *testing.T) {
	const tok = "0123456789abcdef-token"
	srv := mcptest.Start(t, mcptest.Options{SDK: true})
	p, err := scenariofile.Parse([]byte("scenarios:\n  s: {executor: externally-controlled, vus: 1, maxVUs: 4, duration: 8s, flow: [ping, think: 20ms]}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), Config{Addr: "127.0.0.1:0", TokenFile: tokenFile(t, tok)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := chromium.Launch(t)
	dir := t.TempDir()
	done := make(chan *rundir.LoadResult, 1)
	go func() {
		res, err := engine.RunPlan(context.Background(), p, engine.RunOptions{Target: srv.URL, Watch: s, RunDir: dir})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	b.Open(s.URL() + "?token=" + tok)
	if n := b.WaitPoints(1, 10*time.Second); n < 1 {
		t.Fatal("the page got no point")
	}
	var clicked bool
	b.Eval(`(() => { const i = document.querySelector('#control-form input'), btn = document.querySelector('#control-form button');
		if (!i || !btn) return false; i.value = '3'; btn.click(); return true; })()`, &clicked)
	if !clicked {
		var html string
		b.Eval("document.getElementById('control').outerHTML", &html)
		t.Fatalf("the page shows no control: %s", html)
	}
	// The click's POST is asynchronous: wait for the page to show the
	// change it made (its table of changes, redrawn at each tick), well
	// within the run's 8 s, or for the error the page shows beside the
	// button. A 4 s run ended, once on a loaded machine, before the page
	// had its first point and its click's answer.
	var shown string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b.Eval(`(() => { const c = document.querySelectorAll('#t-changes tr').length, m = document.querySelector('#control-form span:last-child');
			return c > 1 ? 'changed' : (m && m.textContent.trim()) || ''; })()`, &shown)
		if shown != "" {
			break
		}
	}
	if shown != "changed" {
		t.Errorf("after the click the page shows %q, want its change in the table of changes", shown)
	}
	res := <-done
	if len(res.ScaleChanges) != 1 || res.ScaleChanges[0].By != engine.ScaleByPage || res.ScaleChanges[0].To != 3 || res.PeakUsers != 3 {
		t.Fatalf("result: changes %+v, peak %d", res.ScaleChanges, res.PeakUsers)
	}
	load, err := os.ReadFile(filepath.Join(dir, rundir.LoadFile))
	if err != nil || !bytes.Contains(load, []byte(`"by":"page"`)) {
		t.Errorf("load.jsonl does not record the page's change (%v)", err)
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", msgs)
	}
}
