package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
	"github.com/leakbench/leakbench/reports/plots"
)

// StepSummaryEnv names the file GitHub Actions shows as a job's summary;
// when it is set, rendering appends the Markdown report to it.
const StepSummaryEnv = "GITHUB_STEP_SUMMARY"

// RenderRun reads the run directory dir and writes its whole report into
// it: summary.json (with the derived pool state), report.md, report.html,
// junit.xml and plots/NAME.png|svg. A run that was killed before writing
// its summary renders with an "incomplete" banner; a directory holding no
// run is ErrNotRun. The Markdown goes to $GITHUB_STEP_SUMMARY too.
func RenderRun(dir string) (*Run, error) {
	r, err := LoadRun(dir)
	if err != nil {
		return nil, err
	}
	return r, renderRun(r, true)
}

func renderRun(r *Run, stepSummary bool) error {
	if _, err := writePlots(r.Dir, r); err != nil {
		return err
	}
	if err := renderSoak(r); err != nil { // soaksection.go
		return err
	}
	resize(r) // sizingsection.go
	if err := writeJSON(filepath.Join(r.Dir, rundir.SummaryFile), r.Summary); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := writeBytes(filepath.Join(r.Dir, rundir.ReportFile), md.Bytes()); err != nil {
		return err
	}
	if err := rundir.WriteFileFunc(filepath.Join(r.Dir, rundir.HTMLFile), r.WriteHTML); err != nil {
		return err
	}
	if err := rundir.WriteFileFunc(filepath.Join(r.Dir, rundir.JUnitFile), r.WriteJUnit); err != nil {
		return err
	}
	if stepSummary {
		return appendStepSummary(md.Bytes())
	}
	return nil
}

// RenderComparison writes a comparison's report into dir: compare.json,
// report.md, report.html, junit.xml and the plots of both runs side by
// side with shared axes. A comparison made with Compare (summaries only)
// reads its runs from BeforeDir and AfterDir, taken relative to dir when
// they are there. The Markdown goes to $GITHUB_STEP_SUMMARY too.
func RenderComparison(dir string, c *Comparison) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if c.before == nil || c.after == nil {
		var err error
		if c.before, err = LoadRun(resolveRunDir(dir, c.BeforeDir)); err != nil {
			return fmt.Errorf("before: %w", err)
		}
		if c.after, err = LoadRun(resolveRunDir(dir, c.AfterDir)); err != nil {
			return fmt.Errorf("after: %w", err)
		}
	}
	plots, err := writePlots(dir, c.before, c.after)
	if err != nil {
		return err
	}
	c.plots = plots
	if err := writeJSON(filepath.Join(dir, rundir.CompareFile), c); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := c.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := writeBytes(filepath.Join(dir, rundir.ReportFile), md.Bytes()); err != nil {
		return err
	}
	if err := rundir.WriteFileFunc(filepath.Join(dir, rundir.HTMLFile), c.WriteHTML); err != nil {
		return err
	}
	if err := rundir.WriteFileFunc(filepath.Join(dir, rundir.JUnitFile), c.WriteJUnit); err != nil {
		return err
	}
	return appendStepSummary(md.Bytes())
}

// RenderSignoff renders a sign-off directory as leakbench signoff lays it
// out: the runs in out/before and out/after each get their own report, and
// out gets the comparison, which it returns for the verdict — with the
// capacity searches of signoff --capacity when out/capacity holds them.
// Only the comparison goes to $GITHUB_STEP_SUMMARY.
func RenderSignoff(out string) (*Comparison, error) {
	return RenderSignoffWith(out, func(before, after *Run) (*Comparison, error) { return CompareRuns(before, after), nil })
}

// RenderSignoffWith is RenderSignoff with the verdict judged by judge
// (a regression verdict needs the application's noise rules).
func RenderSignoffWith(out string, judge func(before, after *Run) (*Comparison, error)) (*Comparison, error) {
	var runs [2]*Run
	for i, name := range []string{"before", "after"} {
		r, err := LoadRun(filepath.Join(out, name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := renderRun(r, false); err != nil {
			return nil, fmt.Errorf("%s report: %w", name, err)
		}
		runs[i] = r
	}
	c, err := judge(runs[0], runs[1])
	if err != nil {
		return nil, err
	}
	c.BeforeDir, c.AfterDir = "before", "after"
	capacity, err := capreport.ReadSignoff(out)
	if err != nil {
		return nil, err
	}
	c.Capacity = capacity
	return c, RenderComparison(out, c)
}

// resolveRunDir finds a comparison's run directory: as recorded, relative
// to the comparison's directory when it is there.
func resolveRunDir(dir, run string) string {
	if !filepath.IsAbs(run) {
		if _, err := os.Stat(filepath.Join(dir, run)); err == nil {
			return filepath.Join(dir, run)
		}
	}
	return run
}

// writePlots writes every plot the runs have data for, as PNG and SVG,
// into dir/plots, and returns their names.
func writePlots(dir string, runs ...*Run) ([]string, error) {
	drawn := plotRuns(runs...)
	names := plots.Names(drawn...)
	if len(names) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, rundir.PlotsDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", rundir.PlotsDir, err)
	}
	// Each file is drawn on its own goroutine, as many at once as there
	// are cores: rasterizing a long run's lines is most of a report's
	// time, and the plots only read the runs.
	type file struct{ name, format string }
	var files []file
	for _, n := range names {
		for _, format := range []string{plots.PNG, plots.SVG} {
			files = append(files, file{n, format})
		}
	}
	errs := make([]error, len(files))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, fl := range files {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			path := filepath.Join(dir, rundir.PlotsDir, fl.name+"."+fl.format)
			errs[i] = rundir.WriteFileFunc(path, func(f io.Writer) error { return plots.Write(f, fl.name, fl.format, drawn...) })
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return names, nil
}

func writeBytes(path string, b []byte) error { return rundir.WriteFile(path, b) }

// appendStepSummary appends md to $GITHUB_STEP_SUMMARY when it is set.
func appendStepSummary(md []byte) error {
	path := os.Getenv(StepSummaryEnv)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("write $%s: %w", StepSummaryEnv, err)
	}
	_, err = io.Copy(f, bytes.NewReader(append(md, '\n')))
	return errors.Join(err, f.Close())
}
