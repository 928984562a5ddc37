package soak

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/plots"
)

// PlotName is the soak plot's name in the run directory's plots/.
const PlotName = "soak"

// WritePlot writes plots/soak.png and .svg into dir: each sampled
// resource's series with its fit (resources never sampled left out).
func WritePlot(dir string, r *rundir.SoakResult, series []Series) error {
	var ps []plots.SoakSeries
	for _, s := range series {
		if len(s.Xs) == 0 {
			continue
		}
		ps = append(ps, plots.SoakSeries{Title: s.Resource.Name + " — " + s.Resource.Verdict, Xs: s.Xs, Ys: s.Ys,
			Fitted: s.Fit.N >= 2, Slope: s.Fit.Slope, Intercept: s.Fit.Intercept, Growing: s.Resource.Verdict == Growing})
	}
	if len(ps) == 0 {
		return nil
	}
	load := r.LoadStart
	ph := plots.SoakPhases{BaselineStart: r.BaselineStart.Sub(load).Seconds(), SteadyStart: r.SteadyStart.Sub(load).Seconds(),
		LoadEnd: r.LoadEnd.Sub(load).Seconds(), CoolDownEnd: r.CoolDownEnd.Sub(load).Seconds()}
	if err := os.MkdirAll(filepath.Join(dir, rundir.PlotsDir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", rundir.PlotsDir, err)
	}
	for _, format := range []string{plots.PNG, plots.SVG} {
		path := filepath.Join(dir, rundir.PlotsDir, PlotName+"."+format)
		if err := rundir.WriteFileFunc(path, func(w io.Writer) error { return plots.WriteSoak(w, format, ph, ps) }); err != nil {
			return fmt.Errorf("soak plot: %w", err)
		}
	}
	return nil
}

// Render re-judges the soak run in dir from its files with the phases and
// settings its summary recorded, and writes its plot: what leakbench
// report does for a soak. stuckAfter is the probe's stuck threshold.
func Render(dir string, prev *rundir.SoakResult, stuckAfter float64) (*rundir.SoakResult, error) {
	ph := Phases{BaselineStart: prev.BaselineStart, LoadStart: prev.LoadStart, LoadEnd: prev.LoadEnd, CoolDownEnd: prev.CoolDownEnd}
	r, series, err := Analyze(dir, prev.Settings, ph, secs(stuckAfter))
	if err != nil {
		return nil, err
	}
	return r, WritePlot(dir, r, series)
}
