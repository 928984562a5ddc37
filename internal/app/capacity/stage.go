package capacity

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/render"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// stageDir is a stage's run directory's name: stage-01-users-40.
func stageDir(i int, load string, n int) string { return fmt.Sprintf("stage-%02d-%s-%d", i, load, n) }

// runStage plays one stage — a whole run at load, against ext — renders
// its reports and judges it. The error is a stage that could not be run
// or judged; a stage that ran has its verdict in the returned record.
func runStage(ctx context.Context, o Options, ext fixtures.External, name, sub string, i, load int) (capreport.Stage, error) {
	sp := o.Spec
	rel := filepath.Join(sub, stageDir(i, sp.Load, load))
	st := capreport.Stage{Index: i, Load: load, Dir: rel}
	unit := sp.Unit(o.Profile.Plan)
	pl, err := stagePlan(o.Profile.Plan, sp, load)
	if err != nil {
		return st, err
	}
	prof := o.Profile
	prof.Plan = pl
	prof.Faults, prof.RecoverySeconds = nil, nil
	fmt.Fprintf(o.Log, "[%s] stage %d: %d %s for %s…\n", name, i, load, unit, sp.Stage)
	dir := filepath.Join(o.Out, rel)
	_, err = runner.Run(ctx, runner.Options{Profile: prof, Name: fmt.Sprintf("%s stage %d", name, i), Dir: dir,
		Log: o.logw(fmt.Sprintf("%s %d", name, i)), Version: o.Version, Env: fixtures.ProviderExternal, External: ext, Target: o.TargetOptions, Telemetry: o.Telemetry, Workers: o.stageWorkers(),
		Watch: o.Watch.stage(name, i, load)})
	if err != nil {
		return st, interrupted(ctx, fmt.Errorf("stage %d: %w", i, err))
	}
	r, err := render.Report(dir)
	if err != nil {
		return st, fmt.Errorf("stage %d: render its reports: %w", i, err)
	}
	if o.sizingGiven() && r.Summary.Probe != nil {
		// The stage's own run directory records the sizing too, as
		// leakbench run --target-rate would: its report is rendered
		// again with it.
		sz, err := reports.SizeRun(dir, o.Sizing)
		if err != nil {
			return st, fmt.Errorf("stage %d: size its pool: %w", i, err)
		}
		r.Summary.Sizing = sz
	}
	measure(&st, r, sp.Stage)
	if r.Summary.Load != nil {
		generatorVerdict(&st, sp, r.Summary.Load.Generator)
	}
	if st.Inconclusive == "" {
		clk, err := stageClock(r, pl)
		if err != nil {
			return st, fmt.Errorf("stage %d: %w", i, err)
		}
		if err := judge(&st, sp, r, clk); err != nil {
			return st, err
		}
		// Only a stage that held must have settled: a load still
		// climbing at its end might yet have broken a limit. A stage
		// that broke one broke it at this load or below, settled or not
		// (failing requests are quick: a stage past an error cliff
		// speeds up as it fails).
		if st.Held {
			if ok, why := settled(r.Load, sp.Stage); !ok {
				st.Inconclusive, st.Held = why, false
			}
		}
	}
	fmt.Fprintf(o.Log, "[%s] stage %d: %d %s — %s | %.1f req/s, p95 %.0f ms, errors %.1f%%%s\n", name, i, load, unit, stageWord(st),
		st.ReqPerSecond, st.P95Ms, 100*st.ErrorRate, poolWords(st))
	return st, nil
}

// stageClock times the trips of the stage r played with plan pl.
func stageClock(r *reports.Run, pl *plan.Plan) (*clock, error) {
	cp, err := plan.Compile(pl)
	if err != nil {
		return nil, fmt.Errorf("compile the stage's thresholds: %w", err)
	}
	return newClock(r, cp.Thresholds)
}

// generatorVerdict records the generator's verdict on the stage; a
// saturated generator makes the stage inconclusive unless the search
// says generator: off.
func generatorVerdict(st *capreport.Stage, sp Spec, g *rundir.Generator) {
	if g == nil {
		return
	}
	st.Generator, st.GeneratorLine = g.Verdict, g.Line()
	if sp.Generator && g.Verdict == rundir.GeneratorSaturated {
		st.Inconclusive = "the load generator saturated (" + g.Line() + "): this load measures leakbench's limit, not the service's"
	}
}

func stageWord(st capreport.Stage) string {
	switch {
	case st.Inconclusive != "":
		return "inconclusive: " + st.Inconclusive
	case st.Held:
		return "held"
	}
	w := "broke " + st.Trips[0].Limit + " " + st.Trips[0].When()
	if len(st.Trips) > 1 {
		w += fmt.Sprintf(" (and %d more)", len(st.Trips)-1)
	}
	return w
}

func poolWords(st capreport.Stage) string {
	if !st.Probed {
		return ""
	}
	s := fmt.Sprintf(", service conns %d, stuck %d, PgBouncer waiting %d", st.ServiceConns, st.MaxStuck, st.PgBouncerWait)
	if st.AppPoolMax > 0 {
		s += fmt.Sprintf(", service pool %g/%g", st.AppPoolPeak, st.AppPoolMax)
	}
	return s
}

// prefixWriter writes each complete line to w with prefix (the runner's
// line writer, which the stage logs share with the runner's own).
func prefixWriter(w io.Writer, prefix string) io.Writer { return runner.Prefixed(w, prefix) }

// stageWorkers are the workers of a stage: as asked, but never more than
// its users (the search's first stages are small).
func (o Options) stageWorkers() workers.Config {
	w := o.Workers
	w.UpToUsers = true
	return w
}
