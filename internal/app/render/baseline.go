package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// ErrBaseline is a baseline that cannot stand for this run: not a run
// directory nor a history directory, a history with no entry of this
// scenario, or a run of another scenario (other executors, users or
// duration) without force. A usage error (exit 2), found before any load.
var ErrBaseline = errors.New("baseline")

// BaselineDirName is where JudgeBaseline writes the comparison by
// default: RUN_DIR/baseline (compare.json, report.md, report.html,
// junit.xml, plots/).
const BaselineDirName = "baseline"

// Scenario is what a run and its baseline must share for their figures to
// compare: the executors (scenario name and executor, sorted), the
// most users at once and the planned duration. Profile is the scenario
// file's or profile's name; a different one is noted, not refused (a file
// may be renamed).
type Scenario struct {
	Profile   string        `json:"profile"`
	Executors []string      `json:"executors"`
	Users     int           `json:"users"`
	Duration  time.Duration `json:"duration"`
}

// ScenarioOfPlan is the scenario a run of p will play (profile: its name,
// as the summary records it).
func ScenarioOfPlan(profile string, p *plan.Plan) (Scenario, error) {
	s := Scenario{Profile: profile}
	if p == nil {
		return s, fmt.Errorf("%w: the run has no plan to compare", ErrBaseline)
	}
	cp, err := plan.Compile(p)
	if err != nil {
		return s, fmt.Errorf("compile the plan: %w", err)
	}
	for _, sc := range cp.Scenarios {
		s.Executors = append(s.Executors, sc.Name+" ("+sc.Executor+")")
		s.Users += sc.Users
		s.Duration = max(s.Duration, sc.StartTime.D()+sc.Length)
	}
	slices.Sort(s.Executors) // the recorded plan may list them in another order
	return s, nil
}

// ScenarioOf is the scenario a finished run played, from its summary's
// recorded plan and load configuration.
func ScenarioOf(s *rundir.Summary) (Scenario, error) {
	sc := Scenario{Profile: s.Profile}
	if s.Load == nil {
		return sc, fmt.Errorf("%w: run %q recorded no load", ErrBaseline, s.Name)
	}
	sc.Users, sc.Duration = s.Load.Config.Users, s.Load.Config.Duration
	if len(s.Load.Plan) > 0 {
		p, err := scenariofile.ReadRecorded(s.Load.Plan)
		if err != nil {
			return sc, fmt.Errorf("%w: run %q: %w", ErrBaseline, s.Name, err)
		}
		for _, x := range p.Scenarios {
			sc.Executors = append(sc.Executors, x.Name+" ("+x.Executor+")")
		}
		slices.Sort(sc.Executors)
	}
	return sc, nil
}

// Differences names what differs between the baseline's scenario (b) and
// the run's (s) that makes their figures incomparable: executors, users,
// duration. An empty list: the same scenario.
func (s Scenario) Differences(b Scenario) []string {
	var out []string
	if be, se := strings.Join(b.Executors, ", "), strings.Join(s.Executors, ", "); be != se && len(b.Executors) > 0 && len(s.Executors) > 0 {
		out = append(out, fmt.Sprintf("executors differ: baseline %s, this run %s", be, se))
	}
	if b.Users != s.Users {
		out = append(out, fmt.Sprintf("users differ: baseline %d, this run %d", b.Users, s.Users))
	}
	if b.Duration != s.Duration {
		out = append(out, fmt.Sprintf("duration differs: baseline %s, this run %s", b.Duration, s.Duration))
	}
	return out
}

// BaselineRun is the stored run a run is judged against (run --baseline).
type BaselineRun struct {
	// Ref is the directory as given.
	Ref string
	// Dir is the baseline's run directory; empty when it came from a
	// history entry whose run directory is gone (its summary stands in).
	Dir string
	// Entry is the history entry, when Ref is a history directory.
	Entry *history.Entry
	// Summary is the baseline run's summary.
	Summary *rundir.Summary
	// Scenario is what the baseline played.
	Scenario Scenario
	// Notes are differences that do not refuse the baseline (another
	// profile name) and, with force, those that would have.
	Notes []string
}

// OpenBaseline finds the baseline ref names before the run, so that a
// wrong one costs no load: a run directory (its summary.json), or a
// history directory (its newest passing entry whose scenario matches
// want). A baseline of another scenario — different executors, users or
// duration — is refused unless force, the error saying what differs.
// Every refusal wraps ErrBaseline (usage, exit 2).
func OpenBaseline(ref string, want Scenario, force bool) (*BaselineRun, error) {
	st, err := os.Stat(ref)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBaseline, ref, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w %s: a file, not a run directory nor a history directory", ErrBaseline, ref)
	}
	if _, err := os.Stat(filepath.Join(ref, history.MarkerFile)); err == nil {
		return openHistoryBaseline(ref, want, force)
	}
	raw, err := os.ReadFile(filepath.Join(ref, rundir.SummaryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %s: not a run directory (no %s) nor a history directory (no %s); give the directory leakbench run --out wrote, or a --history directory",
			ErrBaseline, ref, rundir.SummaryFile, history.MarkerFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBaseline, ref, err)
	}
	sum, err := reports.DecodeSummary(ref, raw)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBaseline, ref, err)
	}
	b := &BaselineRun{Ref: ref, Dir: ref, Summary: sum}
	return b, b.check(want, force)
}

// check refuses a baseline of another scenario (unless force) or one that
// did not complete.
func (b *BaselineRun) check(want Scenario, force bool) error {
	if b.Summary.EndReason != rundir.EndCompleted {
		return fmt.Errorf("%w %s: the baseline run did not complete (ended: %s); give a finished run", ErrBaseline, b.Ref, b.Summary.EndReason)
	}
	sc, err := ScenarioOf(b.Summary)
	if err != nil {
		return err
	}
	b.Scenario = sc
	if sc.Profile != want.Profile && want.Profile != "" {
		b.Notes = append(b.Notes, fmt.Sprintf("profile differs: baseline %q, this run %q", sc.Profile, want.Profile))
	}
	diff := want.Differences(sc)
	if len(diff) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("%w %s is of another scenario: %s; give a baseline of the same scenario, or force to judge it all the same", ErrBaseline, b.Ref, strings.Join(diff, "; "))
	}
	b.Notes = append(b.Notes, diff...)
	return nil
}

// openHistoryBaseline takes the newest passing entry of the history whose
// scenario matches want; with force, the newest passing entry of any.
func openHistoryBaseline(dir string, want Scenario, force bool) (*BaselineRun, error) {
	st, err := history.OpenExisting(dir)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBaseline, dir, err)
	}
	entries, _, err := st.List()
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrBaseline, dir, err)
	}
	var other []string
	var fallback *BaselineRun
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if !e.Pass || len(e.Summary) == 0 {
			continue
		}
		sum, err := reports.DecodeSummary(dir, e.Summary)
		if err != nil {
			continue
		}
		b := &BaselineRun{Ref: dir, Entry: e, Summary: sum}
		if e.RunDir != "" {
			if _, err := os.Stat(filepath.Join(e.RunDir, rundir.SummaryFile)); err == nil {
				b.Dir = e.RunDir
			}
		}
		err = b.check(want, false)
		if err == nil {
			return b, nil
		}
		other = append(other, fmt.Sprintf("%s: %s", e.ID, strings.TrimPrefix(err.Error(), ErrBaseline.Error()+" "+dir+" is of another scenario: ")))
		if fallback == nil && force {
			fallback = b
		}
	}
	if fallback != nil {
		return fallback, fallback.check(want, true)
	}
	if len(other) == 0 {
		return nil, fmt.Errorf("%w %s: the history has no passing entry yet (%d entries); record one with --history first", ErrBaseline, dir, len(entries))
	}
	if len(other) > 3 {
		other = append(other[:3], fmt.Sprintf("and %d more", len(other)-3))
	}
	return nil, fmt.Errorf("%w %s: no passing entry of this scenario (%s, %d users, %s); the newest of others: %s; force takes the newest passing entry all the same",
		ErrBaseline, dir, strings.Join(want.Executors, ", "), want.Users, want.Duration, strings.Join(other, "; "))
}

// BaselineOptions configure JudgeBaseline.
type BaselineOptions struct {
	// Out is where the comparison's reports go; default
	// RUN_DIR/baseline (BaselineDirName).
	Out string
	// Rules are the noise rules (--regression-rule); nil: the defaults.
	Rules []history.Rule
}

// JudgeBaseline judges the finished run in runDir against b in regression
// mode (before: the baseline, after: this run) and writes the comparison
// into o.Out. cmp.Pass false is a regression (exit 99). info is the same
// verdict as a history entry records it (Entry.Baseline). A baseline from
// a history entry whose run directory is gone is read from the entry's
// summary, written to OUT/baseline-run.
func JudgeBaseline(runDir string, b *BaselineRun, o BaselineOptions) (cmp *reports.Comparison, info *history.BaselineInfo, err error) {
	out := o.Out
	if out == "" {
		out = filepath.Join(runDir, BaselineDirName)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", out, err)
	}
	after, err := reports.LoadRun(runDir)
	if err != nil {
		return nil, nil, fmt.Errorf("this run: %w", err)
	}
	baseDir := b.Dir
	if baseDir == "" {
		baseDir = filepath.Join(out, "baseline-run")
		if err := os.MkdirAll(baseDir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("create %s: %w", baseDir, err)
		}
		if err := os.WriteFile(filepath.Join(baseDir, rundir.SummaryFile), b.Entry.Summary, 0o644); err != nil {
			return nil, nil, fmt.Errorf("write the baseline's summary: %w", err)
		}
	}
	before, err := reports.LoadRun(baseDir)
	if err != nil {
		return nil, nil, fmt.Errorf("baseline: %w", err)
	}
	cmp, err = JudgeRuns(before, after, verdict.ModeRegression, o.Rules)
	if err != nil {
		return nil, nil, err
	}
	cmp.Notes = append(cmp.Notes, b.Notes...)
	if err := reports.RenderComparison(out, cmp); err != nil {
		return nil, nil, err
	}
	info = &history.BaselineInfo{Requested: b.Ref, Note: strings.Join(b.Notes, "; ")}
	if b.Entry != nil {
		info.ID, info.Release = b.Entry.ID, b.Entry.Release
	}
	rules := o.Rules
	if rules == nil {
		rules = history.DefaultRules()
	}
	info.Deltas = history.CompareFigures(history.FiguresOfSummary(before.Summary), history.FiguresOfSummary(after.Summary), rules)
	info.Regressed = !cmp.Pass
	return cmp, info, nil
}
