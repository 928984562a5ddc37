package capacity_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/internal/synthetic"
	"github.com/leakbench/leakbench/reports/usl"
)

// TestCapacityUSL: a search's summary.json carries the model fitted to its
// stages, and its Markdown calls it a model; three stages are refused.
func TestCapacityUSL(t *testing.T) {
	model := usl.Fit{Lambda: 10, Sigma: 0.1, Kappa: 0.002}
	search := func(loads ...int) capacity.Search {
		s := capacity.Search{Name: "fixed", Load: "users", Unit: "users", Outcome: capacity.AboveMax, Limits: []string{"pool not exhausted"}}
		for i, n := range loads {
			s.Stages = append(s.Stages, capacity.Stage{Index: i + 1, Load: n, Dir: "s", Held: true, Requests: 100, ReqPerSecond: model.At(float64(n))})
		}
		// A stage that judged nothing is no point of the curve.
		s.Stages = append(s.Stages, capacity.Stage{Index: len(loads) + 1, Load: 500, Dir: "s", Inconclusive: "the generator saturated", ReqPerSecond: 1})
		return s
	}
	for _, tc := range []struct {
		name   string
		loads  []int
		wantMD string
	}{
		{"fitted", []int{1, 5, 10, 20, 40, 80}, "a model, not a measurement"},
		{"three stages", []int{5, 20, 80}, "no prediction — 3 points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := &capacity.Summary{Capacity: capacity.Capacity{Searches: []capacity.Search{search(tc.loads...)}}}
			if err := capacity.Write(dir, c); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var back capacity.Summary
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			f := back.Capacity.Searches[0].USL
			if f == nil || f.Points != len(tc.loads) {
				t.Fatalf("usl %+v, want a fit over %d stages", f, len(tc.loads))
			}
			if len(tc.loads) >= usl.MinPoints && (!f.Predicts() || f.PeakN < 20 || f.PeakN > 22) {
				t.Errorf("usl %+v, want N* ≈ 21.2", f)
			}
			md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
			if !strings.Contains(string(md), tc.wantMD) {
				t.Errorf("report.md lacks %q:\n%s", tc.wantMD, md)
			}
		})
	}
}

// TestCapacitySizingAtKnee: the search's sizing is the stage's at the
// knee — the largest load that held — and the report shows it with each
// stage's hold and ceiling.
func TestCapacitySizingAtKnee(t *testing.T) {
	sz := func(h float64) *rundir.Sizing {
		return &rundir.Sizing{HoldSeconds: h, CeilingReqPerS: 10 / h, Model: "Erlang C", PoolNeeded: 12, TargetReqPerS: 80, OfferedConnections: 80 * h}
	}
	s := capacity.Search{Name: "fixed", Load: "users", Unit: "users", Outcome: capacity.Found, Capacity: 20, FirstBad: 40, Limits: []string{"pool not exhausted"},
		Stages: []capacity.Stage{
			{Index: 1, Load: 10, Dir: "s1", Held: true, Sizing: sz(0.1), HoldSeconds: 0.1, CeilingReqPerS: 100},
			{Index: 2, Load: 40, Dir: "s2", Sizing: sz(0.3), HoldSeconds: 0.3, CeilingReqPerS: 33.3},
			{Index: 3, Load: 20, Dir: "s3", Held: true, Sizing: sz(0.11), HoldSeconds: 0.11, CeilingReqPerS: 90.9},
		}}
	s.SizeAtKnee()
	if s.SizingStage != 3 || s.Sizing.HoldSeconds != 0.11 {
		t.Fatalf("sized from stage %d (hold %g), want stage 3, the knee", s.SizingStage, s.Sizing.HoldSeconds)
	}
	var md strings.Builder
	if err := capacity.WriteMarkdown(&md, &capacity.Summary{Capacity: capacity.Capacity{Searches: []capacity.Search{s}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sizing, from stage 3's measured hold", "Ceiling: the pool serves at most **90.9 req/s**", "| 110 ms · 90.9 req/s |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
}

// TestCapacityHTML: the page opens on the verdict and shows the stages as
// a table, the model and the sizing — no Markdown in a <pre>.
func TestCapacityHTML(t *testing.T) {
	c := synthetic.Capacity()
	for i := range c.Capacity.Searches {
		s := &c.Capacity.Searches[i]
		s.USL = s.FitUSL()
		s.Sizing, s.SizingStage = &rundir.Sizing{HoldSeconds: 0.11, CeilingReqPerS: 90.9, Model: "Erlang C"}, 4
	}
	var b strings.Builder
	if err := capacity.WriteHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	verdict := strings.Index(page, `<p class="verdict pass">commit-in-finally → fixed raised capacity from 12 to 40 users, 3.3×</p>`)
	table := strings.Index(page, "<th>hold / request · ceiling P/h</th>")
	if verdict < 0 || table < verdict {
		t.Errorf("want the verdict first, then the stages' table:\n%s", page)
	}
	for _, want := range []string{"<h2>Sizing, from stage 4&#39;s measured hold</h2>", "Universal Scalability Law", "<svg", "--pass:"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<pre") {
		t.Error("page still holds Markdown in a <pre>")
	}
}

// TestHoldChange: the before/after line says what the fix did to the
// measured hold and to the same pool's ceiling; without a hold, nothing.
func TestHoldChange(t *testing.T) {
	ten := 10.0
	sized := func(name string, h float64) *capacity.Search {
		return &capacity.Search{Name: name, Sizing: &rundir.Sizing{HoldSeconds: h, CeilingReqPerS: ten / h,
			Inputs: []rundir.SizingInput{{Name: "pool size P", Value: &ten, Unit: "connections", Source: "measured"}}}}
	}
	want := "hold fell from 1.9 s to 110 ms per request (before → after, measured from the database): the same pool of 10 now serves at most 90.9 req/s instead of 5.26"
	if got := capacity.HoldChange(sized("before", 1.9), sized("after", 0.11)); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := capacity.HoldChange(&capacity.Search{Name: "before"}, sized("after", 0.11)); got != "" {
		t.Errorf("without a hold before: %q, want nothing", got)
	}
}
