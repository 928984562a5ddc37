package plots

import (
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// scaleChanges are a run's changes of users by hand (an
// externally-controlled scenario steered from the dashboard or leakbench
// scale): summary.json's, else load.jsonl's, for a run cut short.
func scaleChanges(r *Run) []rundir.ScaleChange {
	if r.Summary != nil && r.Summary.Load != nil && len(r.Summary.Load.ScaleChanges) > 0 {
		return r.Summary.Load.ScaleChanges
	}
	var cs []rundir.ScaleChange
	for i := range r.Load {
		cs = append(cs, r.Load[i].Scale...)
	}
	return cs
}

// addScaleMarks marks each change of users by hand on p, a triangle at
// the users it asked for, so that a run steered by hand reads as such.
// Nothing is added to a run without one.
func addScaleMarks(p *panel, r *Run) {
	cs := scaleChanges(r)
	if len(cs) == 0 {
		return
	}
	origin := r.origin()
	xys := make(plotter.XYs, len(cs))
	for i, c := range cs {
		xys[i] = plotter.XY{X: c.Time.Sub(origin).Seconds(), Y: float64(c.To)}
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return // only for values that are not finite: times and counts are
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: colVermilion, Radius: vg.Points(3.5), Shape: draw.PyramidGlyph{}}
	p.Add(sc)
	p.addLegend("users changed by hand", sc)
}
