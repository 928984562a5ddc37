package soak

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/reports/trendfit"
)

// Phases bound a soak: the baseline from BaselineStart (no load), the load
// from LoadStart to LoadEnd, the cool-down to CoolDownEnd (no load).
type Phases struct {
	BaselineStart, LoadStart, LoadEnd, CoolDownEnd time.Time
}

// Series is one resource's one-second points over the whole soak (x in
// seconds from the load's start), with its verdict and fit: what the
// soak's plot draws.
type Series struct {
	Resource rundir.SoakResource
	Xs, Ys   []float64
	// Fit is the steady window's line, x from the load's start.
	Fit trendfit.Fit
}

// resource is one series being read.
type resource struct {
	name, kind string
	s          trendfit.Series
	never      string
}

// Analyze reads the soak run in dir — samples.jsonl, process.jsonl and
// episodes.jsonl, a line at a time — and judges each resource over the
// phases ph with settings set (see Defaults). stuckAfter is the probe's
// stuck threshold, for the culprits. It returns the summary's soak section
// and the series for the plot.
func Analyze(dir string, set rundir.SoakSettings, ph Phases, stuckAfter time.Duration) (*rundir.SoakResult, []Series, error) {
	set = Defaults(set)
	res := &rundir.SoakResult{Settings: set, BaselineStart: ph.BaselineStart, LoadStart: ph.LoadStart,
		SteadyStart: ph.LoadStart.Add(set.Warmup), LoadEnd: ph.LoadEnd, CoolDownEnd: ph.CoolDownEnd}
	if res.SteadyStart.After(ph.LoadEnd) {
		res.SteadyStart = ph.LoadEnd
	}
	origin := ph.BaselineStart
	sec := func(t time.Time) float64 { return t.Sub(origin).Seconds() }
	w := window{loadStart: sec(ph.LoadStart), steadyStart: sec(res.SteadyStart), loadEnd: sec(ph.LoadEnd), coolDownEnd: sec(ph.CoolDownEnd)}
	in := func(t time.Time) bool { return !t.Before(ph.BaselineStart) && !t.After(ph.CoolDownEnd) }

	db, err := readSamples(filepath.Join(dir, rundir.SamplesFile), origin, in)
	if err != nil {
		return nil, nil, err
	}
	svc, own, err := readProcess(filepath.Join(dir, rundir.ProcessFile), origin, in)
	if err != nil {
		return nil, nil, err
	}
	var out []Series
	judgeAll := func(rs []*resource) []rundir.SoakResource {
		var judged []rundir.SoakResource
		for _, r := range rs {
			xs, ys := r.s.Points()
			j := judge(r.name, r.kind, xs, ys, w, set, r.never)
			judged = append(judged, j)
			out = append(out, series(j, xs, ys, w))
		}
		return judged
	}
	res.Resources = judgeAll(append(db, svc...))
	if own != nil {
		l := judgeAll([]*resource{own})[0]
		res.Leakbench = &l
	}
	res.Verdict = overall(res.Resources)
	if res.Culprits, err = culprits(filepath.Join(dir, rundir.EpisodesFile), ph, stuckAfter); err != nil {
		return nil, nil, err
	}
	return res, out, nil
}

// series is a judged resource's points and fit with x from the load's
// start.
func series(j rundir.SoakResource, xs, ys []float64, w window) Series {
	s := Series{Resource: j, Xs: make([]float64, len(xs)), Ys: ys}
	for i, x := range xs {
		s.Xs[i] = x - w.loadStart
	}
	if j.Points >= 2 {
		span := w.loadEnd - w.steadyStart
		if span > 0 {
			s.Fit.N = j.Points
			s.Fit.Slope = (j.SteadyEnd - j.SteadyStart) / span
			s.Fit.Intercept = j.SteadyStart - s.Fit.Slope*(w.steadyStart-w.loadStart)
			s.Fit.R2 = j.R2
		}
	}
	return s
}

// overall is the soak's verdict: growing when any resource is, not judged
// when none was judged, else flat.
func overall(rs []rundir.SoakResource) string {
	judged := false
	for _, r := range rs {
		switch r.Verdict {
		case Growing:
			return Growing
		case Flat, Recovered:
			judged = true
		}
	}
	if !judged {
		return NotJudged
	}
	return Flat
}

// readSamples reads samples.jsonl twice — once for the applications' names,
// once for the points — so that an application absent from a sample (no
// backends) counts 0 there.
func readSamples(path string, origin time.Time, in func(time.Time) bool) ([]*resource, error) {
	apps := map[string]bool{}
	var pgb, pool bool
	if err := eachFile(path, func(s *rundir.Sample) {
		if s.Gap || !in(s.Time) {
			return
		}
		for _, a := range s.Apps {
			apps[a.Name] = true
		}
		pgb = pgb || s.PgBouncer != nil
		pool = pool || s.AppPool != nil
	}); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(apps))
	for n := range apps {
		names = append(names, n)
	}
	sort.Strings(names)
	mk := func(name, k, never string) *resource {
		return &resource{name: name, kind: k, s: trendfit.Series{Origin: origin}, never: never}
	}
	conns := make(map[string]*resource, len(names))
	var rs []*resource
	for _, n := range names {
		conns[n] = mk("connections held ("+n+")", "connections", "")
		rs = append(rs, conns[n])
	}
	if len(names) == 0 {
		rs = append(rs, mk("connections held", "connections", "no backend of any application was sampled"))
	}
	idle, stuck := mk("idle in transaction", "idle_in_tx", ""), mk("stuck idle in transaction", "stuck", "")
	noPgb, noPool := "", ""
	if !pgb {
		noPgb = "PgBouncer was never sampled"
	}
	if !pool {
		noPool = "the service's pool metrics were never scraped"
	}
	svActive, clWaiting := mk("PgBouncer sv_active", "sv_active", noPgb), mk("PgBouncer cl_waiting", "cl_waiting", noPgb)
	acquired, unclosed := mk("service pool acquired", "pool_acquired", noPool), mk("service unclosed sessions", "unclosed_sessions", noPool)
	rs = append(rs, idle, stuck, svActive, clWaiting, acquired, unclosed)
	err := eachFile(path, func(s *rundir.Sample) {
		if s.Gap || !in(s.Time) {
			return
		}
		seen := make(map[string]int, len(s.Apps))
		for _, a := range s.Apps {
			// Held: working or inside a transaction. A pool's idle
			// connections are not counted: PgBouncer and the pool keep
			// what a peak opened (server_idle_timeout), so their number
			// climbs to the pool's high-water mark without any leak.
			seen[a.Name] = a.Total() - a.Idle
		}
		for n, r := range conns {
			r.s.Add(s.Time, float64(seen[n]))
		}
		idle.s.Add(s.Time, float64(s.States.IdleInTx+s.States.IdleInTxAborted))
		stuck.s.Add(s.Time, float64(s.StuckIdleInTx))
		if p := s.PgBouncer; p != nil {
			svActive.s.Add(s.Time, float64(p.SvActive))
			clWaiting.s.Add(s.Time, float64(p.ClWaiting))
		}
		if p := s.AppPool; p != nil {
			acquired.s.Add(s.Time, float64(p.Acquired))
			unclosed.s.Add(s.Time, float64(p.UnclosedSessions))
		}
	})
	return rs, err
}

// readProcess reads process.jsonl: the service's figures and leakbench's
// own resident memory. A soak without the file has neither.
func readProcess(path string, origin time.Time, in func(time.Time) bool) (svc []*resource, own *resource, err error) {
	never := ""
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		never = "no process figures were recorded (" + rundir.ProcessFile + " is missing)"
	}
	mk := func(name, k string) *resource {
		return &resource{name: name, kind: k, s: trendfit.Series{Origin: origin}, never: never}
	}
	rss, fds, gor := mk("service resident memory", "rss_bytes"), mk("service open file descriptors", "open_fds"), mk("service goroutines", "goroutines")
	own = mk("leakbench resident memory", "rss_bytes")
	var got [3]bool
	add := func(r *resource, v *float64, t time.Time, i int) {
		if v != nil {
			r.s.Add(t, *v)
			if i >= 0 {
				got[i] = true
			}
		}
	}
	if never == "" {
		err = eachFile(path, func(p *rundir.ProcessSample) {
			if !in(p.Time) {
				return
			}
			if f := p.Service; f != nil {
				add(rss, f.RSSBytes, p.Time, 0)
				add(fds, f.OpenFDs, p.Time, 1)
				add(gor, f.Goroutines, p.Time, 2)
			}
			if f := p.Leakbench; f != nil {
				add(own, f.RSSBytes, p.Time, -1)
			}
		})
	}
	for i, r := range []*resource{rss, fds, gor} {
		if !got[i] && r.never == "" {
			r.never = "the service's /metrics never exposed it (process_resident_memory_bytes, process_open_fds, go_goroutines)"
		}
	}
	return []*resource{rss, fds, gor}, own, err
}

// culprits are what accumulated: stuck episodes that began in the load and
// were still open when it ended, grouped by the probe's own culprit
// grouping (fingerprint and application).
func culprits(path string, ph Phases, stuckAfter time.Duration) ([]rundir.Culprit, error) {
	sum := probes.NewSummarizer(probes.Config{StuckAfter: stuckAfter}, 0)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	// What accumulated is the few episodes still held when the load
	// ended; an hour's soak has hundreds of thousands that ended before.
	// Their end time is read from the line (gjson, no decoding of the
	// rest) and only the others are decoded.
	sc := jsonl.Scanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if end := gjson.GetBytes(line, "end"); end.Exists() && end.Time().Before(ph.LoadEnd) {
			continue
		}
		var e rundir.Episode
		if json.Unmarshal(line, &e) != nil {
			continue // a torn last line
		}
		if e.Start.Before(ph.LoadStart) || !e.Start.Before(ph.LoadEnd) || e.End.Before(ph.LoadEnd) {
			continue
		}
		sum.AddEpisode(e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return sum.Summary().Culprits, nil
}

// eachFile streams the JSON lines of path into fn.
func eachFile[T any](path string, fn func(*T)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	if _, err := jsonl.Each(f, -1, fn); err != nil {
		return fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return nil
}

// secs is a duration of s seconds.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
