package forensics

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// Without trace context, a stuck episode can still name its users: the
// probe found one of the run's bearer tokens as a literal in its last
// query (rundir.Episode.SentBy; services whose driver binds parameters on
// the client put it there). The users that sent that token are known
// exactly. Which of their requests left the session is not: a virtual
// user sends one request at a time, so the request of those users in
// flight at the moment the session went idle in transaction is the one
// candidate — but a service may run a request's database work after the
// client gave up on it (FastAPI releases a yield dependency's session
// after the response, on a starved thread pool), so the candidate is a
// candidate, counted and shown as such, never printed as the request that
// left the session (DESIGN.md: "a request is named only when the join is
// exact or measured to be right").

// So the join takes the candidate as the request only when it is the one
// request of those users in flight at the episode's start and none of
// their earlier requests was given up by the client (timed out, aborted,
// canceled, or cut off without an answer): a request the service
// answered had run its statements before its answer, so a statement that
// ends later belongs to a request still going — unless the service was
// still working on one the client had abandoned. The own-service test
// measures this rule against the service's own record of which request
// held which backend (internal/app/runner/ownservice_test.go).

// tokenEpisode is an untraced stuck episode that carried a sent token, and
// the requests of its users in flight at its start.
type tokenEpisode struct {
	pid        int32
	start      time.Time
	hold       float64
	token, of  int
	candidates int
	candidate  rundir.Request // the first seen
	// gaveUpBefore: an earlier request of its users, given up by the
	// client, had ended before the episode began.
	gaveUpBefore bool
}

// joined: the candidate is taken as the request.
func (e *tokenEpisode) joined() bool { return e.candidates == 1 && !e.gaveUpBefore }

// gaveUp: the client gave up on r without the service's answer.
func gaveUp(r *rundir.Request) bool {
	switch r.Outcome {
	case rundir.RequestTimeout, rundir.RequestAborted, rundir.RequestCanceled:
		return true
	case rundir.RequestFailed:
		// An answer (an HTTP status, a JSON-RPC error) means the service
		// had finished; a broken connection does not.
		return strings.HasPrefix(r.Kind, "conn") || r.Kind == "tls" || r.Kind == "dns" || r.Kind == "timeout"
	}
	return false
}

// TokenAttribution is what the token join found for one episode: its
// backend and start, the users' token, the requests of those users in
// flight at the episode's start (Candidates; Request is one of them, the
// only one when Candidates is 1), whether one of their earlier requests
// had been given up (GaveUpBefore), and so whether the join takes Request
// as the request that left the session (Joined).
type TokenAttribution struct {
	PID          int32
	Start        time.Time
	Token        int
	Candidates   int
	GaveUpBefore bool
	Joined       bool
	Request      rundir.Request
}

// addSent notes an untraced stuck episode that carried a sent token.
func (fb *Builder) addSent(e *rundir.Episode) {
	if e.TraceID != "" || e.SentBy == nil || e.SentBy.Tokens <= 0 {
		return
	}
	fb.sent = append(fb.sent, tokenEpisode{pid: e.PID, start: e.Start, hold: e.HoldSeconds, token: e.SentBy.Token, of: e.SentBy.Tokens})
}

// joinByToken finds, streaming dir's requests.jsonl, the requests of each
// episode's users in flight at its start, and fills the forensics' token
// counts. Only the lines of users that sent a token some episode carried
// are decoded.
func (fb *Builder) joinByToken() {
	if len(fb.sent) == 0 {
		return
	}
	f := fb.f
	f.SentByToken = len(fb.sent)
	if matchByToken(fb.dir, fb.sent) {
		for i := range fb.sent {
			switch e := &fb.sent[i]; {
			case e.joined():
				f.TokenJoined++
			case e.candidates == 0:
				f.TokenNoCandidate++
			default:
				f.TokenAmbiguous++
			}
		}
	}
}

// matchByToken counts, for each of eps, the requests in dir's
// requests.jsonl sent by a user of its token that were in flight at its
// start; false when the run has no request index.
func matchByToken(dir string, eps []tokenEpisode) bool {
	file, err := os.Open(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		return false
	}
	defer file.Close()
	// By token (and token count), each list sorted by start.
	type key struct{ token, of int }
	byToken := map[key][]int{}
	ofs := map[int]bool{}
	for i, e := range eps {
		k := key{e.token, e.of}
		byToken[k] = append(byToken[k], i)
		ofs[e.of] = true
	}
	for _, idx := range byToken {
		slices.SortFunc(idx, func(a, b int) int { return eps[a].start.Compare(eps[b].start) })
	}
	wanted := func(user int) bool {
		for of := range ofs {
			if _, ok := byToken[key{user % of, of}]; ok {
				return true
			}
		}
		return false
	}
	// The earliest end of a request its users gave up on, by token.
	gaveUpAt := map[key]time.Time{}
	sc := jsonl.Scanner(file)
	for sc.Scan() {
		line := sc.Bytes()
		if u, ok := userOf(line); ok && !wanted(u) {
			continue // not a user of any token an episode carried
		}
		var r rundir.Request
		if json.Unmarshal(line, &r) != nil {
			continue
		}
		end := r.Start.Add(time.Duration(r.Seconds * float64(time.Second)))
		for of := range ofs {
			k := key{r.User % of, of}
			idx := byToken[k]
			if len(idx) > 0 && gaveUp(&r) {
				if t, ok := gaveUpAt[k]; !ok || end.Before(t) {
					gaveUpAt[k] = end
				}
			}
			// The episodes that began while r was in flight.
			lo, _ := slices.BinarySearchFunc(idx, r.Start, func(i int, t time.Time) int { return eps[i].start.Compare(t) })
			for _, i := range idx[lo:] {
				if eps[i].start.After(end) {
					break
				}
				if eps[i].candidates == 0 {
					eps[i].candidate = r
				}
				eps[i].candidates++
			}
		}
	}
	if sc.Err() != nil {
		// A line past jsonl's bound ended the read early: a request
		// missed could make an ambiguous episode look joined. No join
		// is claimed from a partial index.
		for i := range eps {
			eps[i].candidates, eps[i].candidate = 0, rundir.Request{}
		}
		return false
	}
	for k, idx := range byToken {
		if t, ok := gaveUpAt[k]; ok {
			for _, i := range idx {
				eps[i].gaveUpBefore = eps[i].start.After(t)
			}
		}
	}
	return true
}

// userOf reads a request line's user without decoding it: the engine
// writes `{"trace_id":"<32 hex>","user":N,`.
func userOf(line []byte) (int, bool) {
	const head = `{"trace_id":"`
	const userKey = `","user":`
	if !bytes.HasPrefix(line, []byte(head)) || len(line) < len(head)+32+len(userKey)+1 {
		return 0, false
	}
	rest := line[len(head)+32:]
	if !bytes.HasPrefix(rest, []byte(userKey)) {
		return 0, false
	}
	rest = rest[len(userKey):]
	n := bytes.IndexAny(rest, ",}")
	if n <= 0 {
		return 0, false
	}
	u, err := strconv.Atoi(string(rest[:n]))
	return u, err == nil
}

// TokenAttributions is the token join of the run in dir, an episode at a
// time: for a test that measures it against a service's own record of
// which request held which backend, or a person who wants the candidates.
// Episodes are those held at least stuckAfter seconds, without trace
// context, that carried a sent token.
func TokenAttributions(dir string, stuckAfter float64) ([]TokenAttribution, error) {
	f, err := os.Open(filepath.Join(dir, rundir.EpisodesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fb := &Builder{dir: dir, f: &rundir.Forensics{StuckAfterSeconds: stuckAfter}}
	if _, err := jsonl.Each(f, -1, func(e *rundir.Episode) {
		if e.HoldSeconds >= stuckAfter {
			fb.addSent(e)
		}
	}); err != nil {
		return nil, err
	}
	matchByToken(dir, fb.sent)
	out := make([]TokenAttribution, 0, len(fb.sent))
	for _, e := range fb.sent {
		out = append(out, TokenAttribution{PID: e.pid, Start: e.start, Token: e.token, Candidates: e.candidates,
			GaveUpBefore: e.gaveUpBefore, Joined: e.joined(), Request: e.candidate})
	}
	slices.SortFunc(out, func(a, b TokenAttribution) int { return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.PID, b.PID)) })
	return out, nil
}
