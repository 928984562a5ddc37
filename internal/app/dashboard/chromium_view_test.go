package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/chromium"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// TestViewsInChromium: in the browser, a sign-off's page draws a column
// of charts per side, each with its side's points, and a capacity
// search's page draws its stage curve and its stages' table — with no
// console message. A sign-off's page draws the capacity searches that
// follow its sides (signoff --capacity) as the capacity page does.
func TestViewsInChromium(t *testing.T) {
	b := chromium.Launch(t)

	// A point each 100 ms (a run's is each second): at 20 ms, a browser
	// sharing a loaded machine redraws a dozen charts fifty times a
	// second, falls behind, and answers nothing for half a minute.
	const every = 100 * time.Millisecond
	sv := NewSignoffView()
	so := startViewEvery(t, sv, every)
	f, g := &fakeRun{}, &fakeRun{}
	w := so.Part("before")
	w.Probing(f.status)
	w.Started(f.snap)
	time.Sleep(3 * every) // a few points of the before side
	w = so.Part("after")
	w.Probing(g.status)
	w.Started(g.snap)
	b.Open(so.URL())
	b.WaitPoints(20, 10*time.Second)
	var sides struct{ N, Before, After, Rows int }
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b.Eval(`(() => { if (!window.leakbench) return {}; const s = window.leakbench.sideCharts();
			const n = (k) => s[k] ? s[k].load.data.datasets[0].data.length : 0;
			return {N: Object.keys(s).length, Before: n('before'), After: n('after'),
				Rows: document.querySelectorAll('#t-sides tr').length}; })()`, &sides)
		if sides.N == 2 && sides.Before > 0 && sides.After > 0 && sides.Rows == 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if sides.N != 2 || sides.Before == 0 || sides.After == 0 || sides.Rows != 3 {
		t.Errorf("sign-off page: %+v; want two sides' columns with points and a row each", sides)
	}
	// signoff --capacity: the searches after the sides are drawn below
	// them, as the capacity command draws them; a stage gets no column.
	sv.Capacity().Stage("fixed", 1, 10).Started((&fakeRun{}).snap)
	sv.Capacity().Judged(capreport.Search{Name: "fixed", Load: "users", Unit: "users",
		Stages: []capreport.Stage{{Index: 1, Load: 10, Held: true, ReqPerSecond: 50, P95Ms: 12}}})
	var after struct {
		Sides, Rate, Rows int
		Shown             bool
	}
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b.Eval(`(() => { const l = window.leakbench;
			return {Sides: Object.keys(l.sideCharts()).length, Shown: !document.getElementById('v-capacity').hidden,
			Rate: l.curves.rate.data.datasets.length ? l.curves.rate.data.datasets[0].data.length : 0,
			Rows: document.querySelectorAll('#t-stages tr').length}; })()`, &after)
		if after.Shown && after.Rate == 1 && after.Rows == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !after.Shown || after.Rate != 1 || after.Rows != 2 || after.Sides != 2 {
		t.Errorf("sign-off page with its capacity search: %+v; want the curve's stage, its row, and still two sides' columns", after)
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", msgs)
	}

	cv := NewCapacityView()
	cp := startViewEvery(t, cv, every)
	cv.Stage("fixed", 1, 10).Started((&fakeRun{}).snap)
	cv.Judged(capreport.Search{Name: "fixed", Load: "users", Unit: "users", Stages: []capreport.Stage{
		{Index: 1, Load: 10, Held: true, ReqPerSecond: 50, P95Ms: 12},
		{Index: 2, Load: 20, ReqPerSecond: 55, P95Ms: 300, Trips: []capreport.Trip{{Limit: "pool exhausted", Detail: "cl_waiting 4"}}}}})
	b.Open(cp.URL())
	var curve struct {
		Rate, Rows int
		Head       string
	}
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		// The page may not have run its script yet: nothing then.
		b.Eval(`(() => { const l = window.leakbench; if (!l) return {};
			return {Rate: l.curves.rate.data.datasets.length ? l.curves.rate.data.datasets[0].data.length : 0,
			Rows: document.querySelectorAll('#t-stages tr').length, Head: document.getElementById('cap-head').innerText}; })()`, &curve)
		if curve.Rate == 2 && curve.Rows == 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if curve.Rate != 2 || curve.Rows != 3 || !strings.Contains(curve.Head, "pool exhausted") {
		t.Errorf("capacity page: %+v; want a curve of two stages, their rows and the limit that tripped", curve)
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", msgs)
	}
}
