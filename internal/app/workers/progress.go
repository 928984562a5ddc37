package workers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// tail follows one worker's load.jsonl, which its engine appends a line
// to every second: the workers' live figures, read without a protocol of
// their own.
type tail struct {
	path    string
	off     int64
	partial []byte
	// last is the latest second; requests, failures the sums so far.
	last               rundir.LoadPoint
	seen               bool
	requests, failures int64
}

// poll reads the lines added since the last poll; a line not yet whole
// waits for the next.
func (t *tail) poll() {
	f, err := os.Open(t.path)
	if err != nil {
		return // not written yet
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return
	}
	raw, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return
	}
	t.off += int64(len(raw))
	buf := append(t.partial, raw...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		var p rundir.LoadPoint
		if json.Unmarshal(buf[:i], &p) == nil {
			t.last, t.seen = p, true
			t.requests += p.Requests
			t.failures += p.Failures
		}
		buf = buf[i+1:]
	}
	t.partial = append([]byte(nil), buf...)
}

// liveLine is the workers' figures added up as one line.
type liveLine struct {
	tails []*tail
}

func newLive(dirs []string) *liveLine {
	l := &liveLine{}
	for _, d := range dirs {
		l.tails = append(l.tails, &tail{path: filepath.Join(d, rundir.LoadFile)})
	}
	return l
}

// line polls every worker and sums their latest seconds: users, rates and
// cores add up; lateness is the worst worker's.
func (l *liveLine) line(running, total int) string {
	var users, reqs, fails int64
	var rate, cores, lateP99, elapsed float64
	seen := 0
	for _, t := range l.tails {
		t.poll()
		if !t.seen {
			continue
		}
		seen++
		p := t.last
		users += p.ActiveUsers
		rate += p.ReqPerSecond
		cores += p.EngineCores
		lateP99 = max(lateP99, p.LateP99Ms)
		elapsed = max(elapsed, p.ElapsedSeconds)
		reqs += t.requests
		fails += t.failures
	}
	if seen == 0 {
		return fmt.Sprintf("workers %d/%d running | waiting for their first second", running, total)
	}
	return fmt.Sprintf("workers %d/%d running | %3.0fs | users %d | %.0f req/s | requests %d | failures %d | engine %.2f cores | late p99 %.1fms",
		running, total, elapsed, users, rate, reqs, fails, cores, lateP99)
}
