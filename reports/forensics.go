package reports

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/probes"
)

// Forensics is summary.json's forensics section (rundir.Forensics).
type Forensics = rundir.Forensics

// maxWorst bounds Forensics.Worst.
const maxWorst = 10

// deriveForensicsFromDir sets s.Forensics from dir's episodes.jsonl (and
// requests.jsonl), streaming the files: only stuck episodes are kept, and
// of the request index only the records the stuck episodes name. Without
// episodes.jsonl s.Forensics stays as it is.
func deriveForensicsFromDir(dir string, s *Summary) {
	f, err := os.Open(filepath.Join(dir, rundir.EpisodesFile))
	if err != nil {
		return
	}
	defer f.Close()
	fb := newForensicsBuilder(dir, s)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var e probes.Episode
		if len(line) == 0 || json.Unmarshal(line, &e) != nil {
			continue
		}
		fb.add(&e)
	}
	s.Forensics = fb.finish()
}

// deriveForensics sets r.Summary.Forensics from the episodes read.
func deriveForensics(r *Run) {
	if len(r.Episodes) == 0 && r.Summary.Probe == nil {
		return
	}
	fb := newForensicsBuilder(r.Dir, r.Summary)
	for i := range r.Episodes {
		fb.add(&r.Episodes[i])
	}
	r.Summary.Forensics = fb.finish()
}

type forensicsBuilder struct {
	dir   string
	s     *Summary
	f     *Forensics
	stuck []probes.Episode // the worst so far (see add)
	// traced are the stuck episodes' holds by trace id, untraced those of
	// the stuck episodes without one (join.go).
	traced   map[string]tracedHolds
	untraced []float64
	first    *probes.Episode // the earliest stuck episode
}

func newForensicsBuilder(dir string, s *Summary) *forensicsBuilder {
	f := &Forensics{StuckAfterSeconds: 1}
	if s.Probe != nil && s.Probe.StuckAfterSeconds > 0 {
		f.StuckAfterSeconds = s.Probe.StuckAfterSeconds
	}
	f.ReleaseLimitSeconds = f.StuckAfterSeconds
	if s.Probe != nil {
		f.MalformedComments = s.Probe.MalformedComments
	}
	if c, err := rundir.ReadConfig(dir); err == nil {
		if v := c.Profile.Probe.StuckAfter.Seconds(); v > 0 && (s.Probe == nil || s.Probe.StuckAfterSeconds == 0) {
			f.StuckAfterSeconds, f.ReleaseLimitSeconds = v, v
		}
		if v := c.Profile.Probe.SlowRelease.Seconds(); v > 0 {
			f.ReleaseLimitSeconds = v
		}
	}
	return &forensicsBuilder{dir: dir, s: s, f: f}
}

// leaked: nobody released the episode — the server's timeout or a
// termination ended it, or it was still open when the probe stopped.
func leaked(e *probes.Episode) bool { return e.EndReason != probes.EndReleased }

func (fb *forensicsBuilder) add(e *probes.Episode) {
	if e.HoldSeconds < fb.f.StuckAfterSeconds {
		return
	}
	f := fb.f
	f.StuckEpisodes++
	if leaked(e) {
		f.Leaked++
		if f.LeakedByReason == nil {
			f.LeakedByReason = map[string]int{}
		}
		f.LeakedByReason[e.EndReason]++
	} else {
		f.SlowReleases++
		f.SlowReleaseMaxSeconds = max(f.SlowReleaseMaxSeconds, e.HoldSeconds)
	}
	fb.addTrace(e)
	if fb.first == nil || e.Start.Before(fb.first.Start) {
		first := *e
		fb.first = &first
	}
	fb.stuck = append(fb.stuck, *e)
	if len(fb.stuck) >= 8*maxWorst { // only the worst are reported: a leaking day has millions
		fb.stuck = worst(fb.stuck)
	}
}

func (fb *forensicsBuilder) finish() *Forensics {
	f := fb.f
	fb.saturation()
	fb.join()
	if f.StuckEpisodes > 0 {
		f.JoinedShare = float64(f.Joined) / float64(f.StuckEpisodes)
	}
	return f
}

// saturation says whether the run ran at its limit: the pool exhausted
// (the report's own verdict, so derivePool must have run), or arrival-rate
// iterations dropped for want of a free user.
func (fb *forensicsBuilder) saturation() {
	f, s := fb.f, fb.s
	switch {
	case s.Pool != nil && s.Pool.Exhausted:
		f.Saturated, f.SaturatedReason = true, s.Pool.Reason
	case s.Load != nil && s.Load.DroppedIterations > 0:
		f.Saturated, f.SaturatedReason = true, fmt.Sprintf("%d arrival-rate iterations dropped (no free user)", s.Load.DroppedIterations)
	}
	if f.Saturated && s.Load != nil {
		if all, ok := s.Load.Latency["all"]; ok && all.Count > 0 {
			f.SaturatedReason += fmt.Sprintf("; request latency p95 %s", seconds(all.P95Ms/1000))
		}
	}
}

// releaseP99 is the run's release latency, 99th percentile.
func releaseP99(s *Summary) float64 {
	if s.Probe == nil {
		return 0
	}
	return s.Probe.ReleaseP99Seconds
}

// leakCheck is the strict gate on the after run: no session that nobody
// released. Slow releases — stuck episodes the service ended itself — are
// judged by releaseCheck instead.
func leakCheck(after *Summary) Check {
	p, f := after.Probe, after.Forensics
	if f == nil {
		return Check{Name: "after has no stuck session",
			Pass:   p.StuckEpisodes == 0 && p.MaxStuckIdleInTx == 0,
			Detail: fmt.Sprintf("%d stuck episodes, at most %d stuck at once, longest hold %s", p.StuckEpisodes, p.MaxStuckIdleInTx, seconds(p.LongestHoldSeconds))}
	}
	detail := fmt.Sprintf("%d leaked (held ≥ %s and never released: %s), %d killed by the timeout, longest hold %s",
		f.Leaked, seconds(f.StuckAfterSeconds), reasons(f.LeakedByReason), p.TimeoutTerminated, seconds(p.LongestHoldSeconds))
	if f.SlowReleases > 0 {
		detail += fmt.Sprintf("; %d released late by the service (not a leak, judged below)", f.SlowReleases)
	}
	return Check{Name: "after leaks no session", Pass: f.Leaked == 0, Detail: detail}
}

// releaseCheck judges how late the after run's service released its
// sessions: the release p99 must stay below the profile's slow_release
// (default: the stuck threshold). It says when the run was saturated,
// which is what a late release under load usually is.
func releaseCheck(after *Summary) Check {
	f := after.Forensics
	p99 := releaseP99(after)
	detail := fmt.Sprintf("release p99 %s (limit %s)", seconds(p99), seconds(f.ReleaseLimitSeconds))
	if f.SlowReleases > 0 {
		detail += fmt.Sprintf("; %d stuck episodes released by the service itself, the longest after %s — slowness, not a leak",
			f.SlowReleases, seconds(f.SlowReleaseMaxSeconds))
	}
	if f.Saturated {
		detail += "; the run was saturated: " + f.SaturatedReason
	}
	return Check{Name: "after releases promptly", Pass: p99 < f.ReleaseLimitSeconds, Detail: detail}
}

func reasons(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s", m[k], k)
	}
	return b.String()
}

// worst orders stuck episodes longest first, earliest first among equals.
func worst(eps []probes.Episode) []probes.Episode {
	slices.SortFunc(eps, func(a, b probes.Episode) int {
		return cmp.Or(cmp.Compare(b.HoldSeconds, a.HoldSeconds), a.Start.Compare(b.Start))
	})
	return eps[:min(len(eps), maxWorst)]
}
