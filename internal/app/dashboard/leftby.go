package dashboard

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes/querytext"
	"github.com/leakbench/leakbench/reports"
)

// The requests that left the culprits' sessions stuck. The probes name
// a culprit (a query) while the run plays, with the trace ids of its
// stuck episodes; while it plays, the page joins those to the engine's
// request index as it grows (livejoin.go: a bounded tail of
// requests.jsonl, read by the dashboard's ticker). Once the run is over
// the forensics' join of the whole run's episodes to its whole index
// (reports/forensics) is the authority: Finish reads the forensics of
// the command's run directories, and their rows replace the live ones.

// LeftBy is a stuck episode — of the forensics' worst (at most ten a
// run), or one the live join follows — and the request that left it,
// when the join found it.
type LeftBy struct {
	// Run is the run directory under the command's (a sign-off's
	// "before", "after"), "" for the command's own.
	Run string `json:"run,omitempty"`
	// Fingerprint is the episode's last query, its literals removed,
	// as the culprits table shows it.
	Fingerprint string  `json:"fingerprint"`
	HoldSeconds float64 `json:"hold_seconds"`
	// EndReason is how the episode ended; "open" in the live join for
	// one still open (HoldSeconds is then its hold so far).
	EndReason string `json:"end_reason"`
	TraceID   string `json:"trace_id,omitempty"`
	// JoinedBy says how the request was found (trace context, or the
	// bearer token's one request in flight); empty, with no Request,
	// when it was not.
	JoinedBy string         `json:"joined_by,omitempty"`
	Request  *LeftByRequest `json:"request,omitempty"`
}

// LeftByRequest is the request as the engine recorded it.
type LeftByRequest struct {
	User      int     `json:"user"`
	Scenario  string  `json:"scenario"`
	Iteration int64   `json:"iteration"`
	Method    string  `json:"method"`
	Name      string  `json:"name,omitempty"`
	Outcome   string  `json:"outcome"`
	Kind      string  `json:"kind,omitempty"`
	Seconds   float64 `json:"seconds"`
}

// leftBy reads the forensics of the run in dir and of the runs one
// level below it (a sign-off's sides), in that order. A directory with
// no summary or no forensics adds nothing: the page has nothing to link.
func leftBy(dir string) []LeftBy {
	if dir == "" {
		return nil
	}
	var out []LeftBy
	add := func(run, d string) {
		s, err := reports.ReadRun(d)
		if err != nil || s.Forensics == nil {
			return
		}
		for _, w := range s.Forensics.Worst {
			out = append(out, leftByOf(run, w))
		}
	}
	add("", dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	// A sign-off's sides first, in the order they played.
	slices.SortStableFunc(names, func(a, b string) int { return sideOrder(a) - sideOrder(b) })
	for _, n := range names {
		add(n, filepath.Join(dir, n))
	}
	return out
}

// sideOrder puts before ahead of after, and both ahead of the rest.
func sideOrder(name string) int {
	switch name {
	case "before":
		return 0
	case "after":
		return 1
	}
	return 2
}

// leftByOf is one worst episode as the page shows it. The query is a
// fingerprint again (literals removed), as the culprits' are: nothing a
// literal held reaches the page.
func leftByOf(run string, w rundir.WorstEpisode) LeftBy {
	l := LeftBy{Run: run, Fingerprint: querytext.Fingerprint(w.Fingerprint), HoldSeconds: w.HoldSeconds,
		EndReason: w.EndReason, TraceID: w.TraceID, JoinedBy: w.JoinedBy}
	if r := w.Request; r != nil {
		l.Request = &LeftByRequest{User: r.User, Scenario: r.Scenario, Iteration: r.Iteration, Method: r.Method, Name: r.Name,
			Outcome: r.Outcome, Kind: r.Kind, Seconds: seconds(r.Ended.Sub(r.Started))}
	}
	return l
}
