package dashboard

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/probes/querytext"
)

// The live join: while the run plays, each tick names the requests that
// left the sessions the probe tracks as stuck. The probe lists the stuck
// episodes whose queries carried a trace id (probes.Status.Stuck: the
// oldest open ones and the latest ended, a few dozen at most); the engine
// appends a line per request, keyed by the trace id it sent, to the run's
// requests.jsonl (scenarios/engine/reqindex), flushed at least every
// second. The dashboard reads only the bytes added since its last tick
// and looks at each line's trace id alone (bytes.Index, no decoding);
// only a line whose trace id is a stuck episode's is decoded. A request's
// line is written when it ends, often before its session has been idle
// long enough to count as stuck, so the trace ids of the recent lines are
// kept, with their offsets, in a window bounded in lines and in age
// (reqWindow): when an episode is first seen stuck, the window is
// searched for its trace id (one pass for all the tick's new ones) and
// its line read back (one pread). Keeping a line costs a ring slot, no
// map: the searches are few (an episode is searched for once), the lines
// thousands a second. The engine keeps nothing more for this, and the
// end-of-run join (the forensics, leftby.go) replaces the live one at
// Finish.
//
// Bounds: the window holds at most windowLines entries (24 bytes each in
// its ring: 1.5 MB at most; at 3,000 requests a second, the last 20
// seconds) and forgets entries older than windowAge; a tick reads at most
// tickBytes of the file (what is left is read on the next); a line longer
// than maxLine is skipped; at most 4×liveLeftBy episodes a run are kept,
// liveLeftBy shown. BenchmarkDashboardCost measures a tick with the join.
const (
	windowLines = 1 << 16
	windowAge   = 60 * time.Second
	tickBytes   = 16 << 20
	maxLine     = 16 << 10
	liveLeftBy  = 10
	readChunk   = 256 << 10
)

// traceKey is the "trace_id" key as reqindex writes it, first on a line.
var traceKey = []byte(`"trace_id":"`)

// reqTail follows a growing requests.jsonl: its new whole lines, and the
// recent lines' trace ids with their offsets. It is not safe for
// concurrent use.
type reqTail struct {
	file    string
	f       *os.File // nil until the file exists
	off     int64    // the offset of the first byte not yet taken as a line
	buf     []byte
	skipRun bool // the line under way is longer than maxLine: skipped to its end
	win     reqWindow
}

// reqWindow is the trace ids of the recent lines: a ring of at most
// windowLines entries, the oldest evicted first or once older than
// windowAge.
type reqWindow struct {
	ring []winEntry
	head int // the oldest entry's index in ring
	n    int
}

type winEntry struct {
	trace uint64 // traceKeyOf
	off   int64
	at    int64 // unix nanoseconds it was read at
}

// traceKeyOf is the window's key of a trace id: its last 8 bytes, random
// in a W3C trace id. Two traces that share them (one in 2^32 among the
// window's 2^16) only cost a miss: a line read back is checked against
// the whole id.
func traceKeyOf(tr [16]byte) uint64 { return binary.BigEndian.Uint64(tr[8:]) }

func newReqTail(file string) *reqTail { return &reqTail{file: file} }

// add keeps the line at off with trace id tr, read at now.
func (w *reqWindow) add(tr [16]byte, off int64, now time.Time) {
	k := traceKeyOf(tr)
	if w.n == len(w.ring) {
		if len(w.ring) == windowLines {
			w.evictOldest()
		} else {
			// Full below its bound: grow it, the oldest first.
			r := make([]winEntry, 0, min(max(2*len(w.ring), 1024), windowLines))
			for i := range w.n {
				r = append(r, w.ring[(w.head+i)%len(w.ring)])
			}
			w.ring, w.head = r[:cap(r)], 0
		}
	}
	w.ring[(w.head+w.n)%len(w.ring)] = winEntry{trace: k, off: off, at: now.UnixNano()}
	w.n++
}

// find gives, for each of keys (traceKeyOf) in the window, the offset of
// its latest line: one pass over the ring, the newest first, each entry
// tested against a 1,024-bit filter of keys before the keys themselves.
func (w *reqWindow) find(keys []uint64) map[uint64]int64 {
	if len(keys) == 0 || w.n == 0 {
		return nil
	}
	var filter [16]uint64
	for _, k := range keys {
		filter[k>>6&15] |= 1 << (k & 63)
	}
	out := map[uint64]int64{}
	for i := w.n - 1; i >= 0 && len(out) < len(keys); i-- {
		e := &w.ring[(w.head+i)%len(w.ring)]
		if filter[e.trace>>6&15]&(1<<(e.trace&63)) == 0 {
			continue
		}
		if _, done := out[e.trace]; !done && slices.Contains(keys, e.trace) {
			out[e.trace] = e.off
		}
	}
	return out
}

// evictOldest forgets the oldest entry.
func (w *reqWindow) evictOldest() {
	w.head = (w.head + 1) % len(w.ring)
	w.n--
}

// expire forgets the entries read before now-windowAge.
func (w *reqWindow) expire(now time.Time) {
	for t := now.Add(-windowAge).UnixNano(); w.n > 0 && w.ring[w.head].at < t; {
		w.evictOldest()
	}
}

// traceOf is a line's trace id, by its key alone: false when it has none
// a request index writes.
func traceOf(line []byte) (tr [16]byte, ok bool) {
	i := 1 // where reqindex writes it, first; searched for on another writer's line
	if len(line) == 0 || !bytes.HasPrefix(line[1:], traceKey) {
		if i = bytes.Index(line, traceKey); i < 0 {
			return tr, false
		}
	}
	if len(line) < i+len(traceKey)+32 {
		return tr, false
	}
	_, err := hex.Decode(tr[:], line[i+len(traceKey):i+len(traceKey)+32])
	return tr, err == nil
}

// poll reads the whole lines added since the last poll, keeps their
// trace ids in the window and hands each to want (its bytes are valid
// during the call only). A file not yet created is no error: the run has
// not sent a request yet.
func (t *reqTail) poll(now time.Time, want func(tr [16]byte, line []byte)) error {
	t.win.expire(now)
	if t.f == nil {
		f, err := os.Open(t.file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		t.f = f
	}
	if fi, err := t.f.Stat(); err == nil && fi.Size() < t.off {
		// Cut (the run's directory made again): start again, in the
		// same ring.
		t.off, t.buf, t.skipRun, t.win = 0, t.buf[:0], false, reqWindow{ring: t.win.ring}
	}
	if t.buf == nil {
		t.buf = make([]byte, 0, readChunk)
	}
	for read := 0; read < tickBytes; {
		// buf holds the partial line at t.off; new bytes follow it.
		pending := len(t.buf)
		if cap(t.buf)-pending < readChunk/2 {
			t.buf = slices.Grow(t.buf, readChunk)
		}
		n, err := t.f.ReadAt(t.buf[pending:cap(t.buf)], t.off+int64(pending))
		t.buf = t.buf[:pending+n]
		read += n
		t.lines(now, want)
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lines takes buf's whole lines, leaving the partial last one in it.
func (t *reqTail) lines(now time.Time, want func(tr [16]byte, line []byte)) {
	b := t.buf
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		line := b[:i]
		if t.skipRun {
			t.skipRun = false // the end of a line too long to keep
		} else if tr, ok := traceOf(line); ok {
			t.win.add(tr, t.off, now)
			want(tr, line)
		}
		t.off += int64(i + 1)
		b = b[i+1:]
	}
	if len(b) > maxLine {
		// A line this long is no request index's: skip to its end.
		t.off += int64(len(b))
		b, t.skipRun = b[:0], true
	}
	t.buf = append(t.buf[:0], b...)
}

// lineAt reads back the line at off (one of the window's), nil when it
// cannot.
func (t *reqTail) lineAt(off int64) []byte {
	if t.f == nil {
		return nil
	}
	b := make([]byte, maxLine)
	n, _ := t.f.ReadAt(b, off)
	if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
		return b[:i]
	}
	return nil
}

// close lets the file go.
func (t *reqTail) close() {
	if t.f != nil {
		_ = t.f.Close()
		t.f = nil
	}
}

// liveJoin is one run's live join: its tail of requests.jsonl and the
// stuck episodes seen so far (at most liveLeftBy shown: the longest
// holds; the probe's list is bounded too).
type liveJoin struct {
	run  string // LeftBy.Run: the part playing ("" for a run)
	tail *reqTail
	// stuck is the episodes seen stuck, by trace id, with the request
	// once found; at most 4×liveLeftBy are kept, the shortest holds
	// forgotten first.
	stuck map[[16]byte]*liveEpisode
}

// liveEpisode is a stuck episode as the page shows it, and the probe's
// query it was fingerprinted from (again only when it changes).
type liveEpisode struct {
	LeftBy
	query string
}

func newLiveJoin(run, file string) *liveJoin {
	return &liveJoin{run: run, tail: newReqTail(file), stuck: map[[16]byte]*liveEpisode{}}
}

// update takes the probe's stuck episodes and the index's new lines at
// now, and returns the episodes to show, the longest holds first.
func (j *liveJoin) update(now time.Time, stuck []probes.StuckTrace) []LeftBy {
	var fresh []*liveEpisode // first seen now: their lines may be in the window
	for _, s := range stuck {
		var tr [16]byte
		if len(s.TraceID) != 32 {
			continue
		}
		if _, err := hex.Decode(tr[:], []byte(s.TraceID)); err != nil {
			continue
		}
		l := j.stuck[tr]
		if l == nil {
			l = &liveEpisode{LeftBy: LeftBy{Run: j.run, TraceID: s.TraceID}}
			j.stuck[tr] = l
			fresh = append(fresh, l)
		}
		if l.query != s.Fingerprint || l.Fingerprint == "" {
			l.query, l.Fingerprint = s.Fingerprint, querytext.Fingerprint(s.Fingerprint)
		}
		l.HoldSeconds = roundMs(s.HoldSeconds)
		l.EndReason = s.EndReason
		if s.Open {
			l.EndReason = "open"
		}
	}
	if len(fresh) > 0 {
		keys := make([]uint64, len(fresh))
		for i, l := range fresh {
			var tr [16]byte
			_, _ = hex.Decode(tr[:], []byte(l.TraceID))
			keys[i] = traceKeyOf(tr)
		}
		offs := j.tail.win.find(keys)
		for i, l := range fresh {
			if off, ok := offs[keys[i]]; ok {
				j.found(&l.LeftBy, j.tail.lineAt(off))
			}
		}
	}
	_ = j.tail.poll(now, func(tr [16]byte, line []byte) {
		if l := j.stuck[tr]; l != nil && l.Request == nil {
			j.found(&l.LeftBy, line)
		}
	})
	j.trim()
	out := make([]LeftBy, 0, len(j.stuck))
	for _, l := range j.stuck {
		out = append(out, l.LeftBy)
	}
	slices.SortFunc(out, byHold)
	return out[:min(len(out), liveLeftBy)]
}

// byHold orders the longest hold first, then by trace id.
func byHold(a, b LeftBy) int {
	return cmp.Or(cmp.Compare(b.HoldSeconds, a.HoldSeconds), cmp.Compare(a.TraceID, b.TraceID))
}

// found gives l the request on line, when it decodes.
func (j *liveJoin) found(l *LeftBy, line []byte) {
	var r rundir.Request
	if line == nil || json.Unmarshal(line, &r) != nil || r.TraceID != l.TraceID {
		return
	}
	l.JoinedBy = rundir.JoinedByTrace
	l.Request = &LeftByRequest{User: r.User, Scenario: r.Scenario, Iteration: r.Iteration, Method: r.Method, Name: r.Name,
		Outcome: r.Outcome, Kind: r.Kind, Seconds: roundMs(r.Seconds)}
}

// trim keeps the 4×liveLeftBy longest holds.
func (j *liveJoin) trim() {
	if len(j.stuck) <= 4*liveLeftBy {
		return
	}
	all := make([]LeftBy, 0, len(j.stuck))
	for _, l := range j.stuck {
		all = append(all, l.LeftBy)
	}
	slices.SortFunc(all, byHold)
	for _, l := range all[4*liveLeftBy:] {
		var tr [16]byte
		_, _ = hex.Decode(tr[:], []byte(l.TraceID))
		delete(j.stuck, tr)
	}
}

// roundMs is s to the millisecond.
func roundMs(s float64) float64 { return seconds(time.Duration(s * float64(time.Second))) }

// liveLeft is the server's live join: the current run's, and the rows
// of the runs before it (a sign-off's before while after plays).
type liveLeft struct {
	mu   sync.Mutex // a tick and Finish's may overlap
	join *liveJoin
	last []LeftBy // join's rows at the last tick
	done []LeftBy // the earlier runs' last rows
}

// Requests implements runner.Watch's optional RequestsWatch: file is the
// run's requests.jsonl, which the page's ticks tail from now on.
func (s *Server) Requests(file string) {
	s.mu.Lock()
	run := s.part
	s.mu.Unlock()
	l := &s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.join != nil {
		l.join.tail.close()
		l.done = append(l.done, l.last...)
	}
	l.join, l.last = newLiveJoin(run, file), nil
}

// Requests implements runner.Watch's optional RequestsWatch.
func (w *PartWatch) Requests(file string) {
	if w.current() {
		w.s.Requests(file)
	}
}

// rows updates the live join with the probe's stuck episodes at now and
// returns every run's rows, nil when there are none.
func (l *liveLeft) rows(now time.Time, stuck []probes.StuckTrace) []LeftBy {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.join != nil {
		l.last = l.join.update(now, stuck)
	}
	if len(l.done)+len(l.last) == 0 {
		return nil
	}
	return append(slices.Clip(l.done), l.last...)
}

// close lets the file go; the rows stay.
func (l *liveLeft) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.join != nil {
		l.join.tail.close()
	}
}
