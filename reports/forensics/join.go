package forensics

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// The join: a stuck episode whose last query carried a traceparent
// (sqlcommenter) is tied to the engine's record of the request with that
// trace id (requests.jsonl), after the run. The request index is read
// streaming and only the lines a stuck episode names are kept, so memory
// grows with the stuck episodes, not with the requests.

// tokenKey names an episode of the token join.
type tokenKey struct {
	pid   int32
	start time.Time
}

// tracedHolds are the hold times of the stuck episodes that carried one
// trace id (a request's sessions may leave more than one).
type tracedHolds []float64

// addTrace notes a stuck episode's trace id and locks for the join.
func (fb *Builder) addTrace(e *rundir.Episode) {
	f := fb.f
	if e.Blocked > 0 {
		f.EpisodesBlocking++
		f.BlockedBackends += e.Blocked
		f.BlockedWaitSeconds += e.BlockedWaitSeconds
	}
	if e.TraceID == "" {
		if e.SentBy == nil { // else the token join has it (tokens.go)
			fb.untraced = append(fb.untraced, e.HoldSeconds)
		}
		return
	}
	f.Traced++
	if fb.traced == nil {
		fb.traced = map[string]tracedHolds{}
	}
	fb.traced[e.TraceID] = append(fb.traced[e.TraceID], e.HoldSeconds)
}

// join reads the request index for the traced stuck episodes and fills
// Joined, ByRequest and Worst.
func (fb *Builder) join() {
	f := fb.f
	reqs := fb.readRequests()
	type key struct{ method, name, outcome string }
	groups := map[key]*rundir.RequestGroup{}
	reqSeconds := map[key]float64{}
	add := func(k key, holds []float64, seconds float64) {
		g := groups[k]
		if g == nil {
			g = &rundir.RequestGroup{Method: k.method, Name: k.name, Outcome: k.outcome}
			groups[k] = g
		}
		for _, h := range holds {
			g.Episodes++
			g.TotalHoldSeconds += h
			g.MaxHoldSeconds = max(g.MaxHoldSeconds, h)
			reqSeconds[k] += seconds
		}
	}
	notJoined := key{method: "(not joined)", outcome: "unknown"}
	// In trace id order: sums of hold times come out the same, to the
	// last digit, however the map is laid out.
	for _, tid := range slices.Sorted(maps.Keys(fb.traced)) {
		holds := fb.traced[tid]
		r, ok := reqs[tid]
		if !ok {
			add(notJoined, holds, 0)
			continue
		}
		f.Joined += len(holds)
		add(key{r.Method, r.Name, r.Outcome}, holds, r.Seconds)
	}
	// The token join's (tokens.go, run before): a joined episode counts
	// with its request, the others as untraced.
	byToken := map[tokenKey]rundir.Request{}
	for i := range fb.sent {
		e := &fb.sent[i]
		if e.joined() {
			r := e.candidate
			f.Joined++
			add(key{r.Method, r.Name, r.Outcome}, []float64{e.hold}, r.Seconds)
			byToken[tokenKey{e.pid, e.start}] = r
		} else {
			fb.untraced = append(fb.untraced, e.hold)
		}
	}
	if len(fb.untraced) > 0 {
		add(key{method: "(no trace context)", outcome: "unknown"}, fb.untraced, 0)
	}
	for k, g := range groups {
		if g.Episodes > 0 {
			g.MeanRequestSeconds = reqSeconds[k] / float64(g.Episodes)
		}
		f.ByRequest = append(f.ByRequest, *g)
	}
	slices.SortFunc(f.ByRequest, func(a, b rundir.RequestGroup) int {
		return cmp.Or(cmp.Compare(b.Episodes, a.Episodes), cmp.Compare(b.TotalHoldSeconds, a.TotalHoldSeconds),
			cmp.Compare(a.Method, b.Method), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Outcome, b.Outcome))
	})
	drill := func(e *rundir.Episode) rundir.WorstEpisode {
		w := rundir.WorstEpisode{PID: e.PID, Start: e.Start, HoldSeconds: e.HoldSeconds, EndReason: e.EndReason,
			Fingerprint: e.Fingerprint, TraceID: e.TraceID, Blocked: e.Blocked, BlockedWaitSeconds: e.BlockedWaitSeconds}
		if r, ok := reqs[e.TraceID]; ok && e.TraceID != "" {
			w.Request, w.JoinedBy = episodeRequest(r), rundir.JoinedByTrace
		} else if r, ok := byToken[tokenKey{e.PID, e.Start}]; ok && e.TraceID == "" {
			w.Request, w.JoinedBy = episodeRequest(r), rundir.JoinedByToken
		}
		return w
	}
	for _, e := range worst(fb.stuck) {
		f.Worst = append(f.Worst, drill(&e))
	}
	if fb.first != nil {
		w := drill(fb.first)
		f.First = &w
	}
}

// readRequests streams dir's requests.jsonl and returns the records whose
// trace id a traced stuck episode carries. A line that does not parse (a
// torn last one) is skipped.
func (fb *Builder) readRequests() map[string]rundir.Request {
	out, ok := requestsFor(fb.dir, func(id string) bool { _, ok := fb.traced[id]; return ok })
	fb.f.RequestsIndexed = ok
	return out
}

// requestsFor streams dir's requests.jsonl and returns the records whose
// trace id want wants; ok is false when the run has no request index. A
// line that does not parse (a torn last one) is skipped.
func requestsFor(dir string, want func(traceID string) bool) (map[string]rundir.Request, bool) {
	file, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		return nil, false
	}
	defer file.Close()
	out := map[string]rundir.Request{}
	prefix := []byte(`{"trace_id":"`)
	sc := jsonl.Scanner(file)
	for sc.Scan() {
		line := sc.Bytes()
		// The engine writes trace_id first: most lines are skipped
		// without decoding them.
		if bytes.HasPrefix(line, prefix) && len(line) > len(prefix)+32 && !want(string(line[len(prefix):len(prefix)+32])) {
			continue
		}
		var r rundir.Request
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		if want(r.TraceID) {
			out[r.TraceID] = r
		}
	}
	if sc.Err() != nil {
		return nil, false // a partial index joins nothing (a line past jsonl's bound)
	}
	return out, true
}

// episodeRequest is the part of request r an episode names.
func episodeRequest(r rundir.Request) *rundir.EpisodeRequest {
	return &rundir.EpisodeRequest{User: r.User, Scenario: r.Scenario, Iteration: r.Iteration,
		Method: r.Method, Name: r.Name, Started: r.Start,
		Ended: r.Start.Add(time.Duration(r.Seconds * float64(time.Second))), Outcome: r.Outcome, Kind: r.Kind}
}
