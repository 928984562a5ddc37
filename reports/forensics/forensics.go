// Package forensics finds out who left a run's stuck sessions. It takes
// the run's idle-in-transaction episodes one at a time, as they are read,
// and of those held at least the stuck threshold tells the leaked (nobody
// released them: the server's timeout or a termination ended them, or
// they were still open at the end) from the ones the service released
// late, counts the backends they kept waiting on their locks, and joins
// them by the trace id their last query carried (sqlcommenter) to the
// load engine's record of the request that left them (requests.jsonl).
// What it finds is summary.json's forensics section, rundir.Forensics,
// but for whether the run was saturated, which the report judges from its
// own pool verdict. WriteMarkdown and Citation put what it found into the
// report's words.
package forensics

import (
	"cmp"
	"slices"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// maxWorst bounds Forensics.Worst.
const maxWorst = 10

// Builder makes the forensics of a run from its episodes.
type Builder struct {
	dir   string
	f     *rundir.Forensics
	stuck []rundir.Episode // the worst so far (see Add)
	// traced are the stuck episodes' holds by trace id, untraced those of
	// the stuck episodes without one (join.go).
	traced   map[string]tracedHolds
	untraced []float64
	first    *rundir.Episode // the earliest stuck episode
	// sent are the untraced stuck episodes that carried a sent token
	// (tokens.go).
	sent []tokenEpisode
}

// New starts the forensics of the run in dir. probe is its probe summary
// (nil when there is none): its stuck threshold (default 1 s) and the
// sqlcommenter comments it could not read. dir's config.json, when there
// is one, has the profile's stuck threshold (for a probe summary without
// one) and its slow_release limit (default: the stuck threshold).
func New(dir string, probe *rundir.ProbeSummary) *Builder {
	f := &rundir.Forensics{StuckAfterSeconds: 1}
	if probe != nil && probe.StuckAfterSeconds > 0 {
		f.StuckAfterSeconds = probe.StuckAfterSeconds
	}
	f.ReleaseLimitSeconds = f.StuckAfterSeconds
	if probe != nil {
		f.MalformedComments = probe.MalformedComments
	}
	if c, err := rundir.ReadConfig(dir); err == nil {
		if v := c.Profile.Probe.StuckAfter.Seconds(); v > 0 && (probe == nil || probe.StuckAfterSeconds == 0) {
			f.StuckAfterSeconds, f.ReleaseLimitSeconds = v, v
		}
		if v := c.Profile.Probe.SlowRelease.Seconds(); v > 0 {
			f.ReleaseLimitSeconds = v
		}
	}
	return &Builder{dir: dir, f: f}
}

// leaked: nobody released the episode — the server's timeout or a
// termination ended it, or it was still open when the probe stopped.
func leaked(e *rundir.Episode) bool { return e.EndReason != rundir.EndReleased }

// Add takes the run's next episode; only a stuck one is kept, and of
// those only the worst, whole.
func (fb *Builder) Add(e *rundir.Episode) {
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
	fb.addSent(e)
	if fb.first == nil || e.Start.Before(fb.first.Start) {
		first := *e
		fb.first = &first
	}
	fb.stuck = append(fb.stuck, *e)
	if len(fb.stuck) >= 8*maxWorst { // only the worst are reported: a leaking day has millions
		fb.stuck = worst(fb.stuck)
	}
}

// Finish joins the stuck episodes to the run's request index and returns
// the forensics. Saturated and SaturatedReason are left unset.
func (fb *Builder) Finish() *rundir.Forensics {
	f := fb.f
	fb.joinByToken() // before join, which counts its episodes
	fb.join()
	if f.StuckEpisodes > 0 {
		f.JoinedShare = float64(f.Joined) / float64(f.StuckEpisodes)
	}
	return f
}

// worst orders stuck episodes longest first, earliest first among equals.
func worst(eps []rundir.Episode) []rundir.Episode {
	slices.SortFunc(eps, func(a, b rundir.Episode) int {
		return cmp.Or(cmp.Compare(b.HoldSeconds, a.HoldSeconds), a.Start.Compare(b.Start))
	})
	return eps[:min(len(eps), maxWorst)]
}
