package probes

import (
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// warnings collects failures by source and message and tells
// Config.OnWarning when a source's condition changes.
type warnings struct {
	mu      sync.Mutex
	on      func(rundir.Warning)
	list    []*rundir.Warning
	byKey   map[warnKey]*rundir.Warning
	failing map[string]warnKey // source → its current failure
}

type warnKey struct{ source, class string }

func newWarnings(on func(rundir.Warning)) *warnings {
	return &warnings{on: on, byKey: make(map[warnKey]*rundir.Warning), failing: make(map[string]warnKey)}
}

// maxWarningKinds bounds the kinds of failure kept; the ones after it
// count, by source, under otherFailures.
const (
	maxWarningKinds = 100
	otherFailures   = "other kinds of failure"
)

// digits makes messages that differ only in numbers (a retry delay, a
// port) one kind of failure.
var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(ms|s|µs)?`)

// report records the outcome of one read of source: err nil means it
// worked.
func (w *warnings) report(source string, err error, now time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	var notify *rundir.Warning
	cur, failing := w.failing[source]
	if err == nil {
		if failing {
			delete(w.failing, source)
			r := *w.byKey[cur]
			r.Message, r.Recovered, r.First, r.Last = "working again", true, now, now
			notify = &r
		}
	} else {
		msg := redact.String(err.Error())
		k := warnKey{source, digits.ReplaceAllString(msg, "N")}
		x := w.byKey[k]
		if x == nil && len(w.list) >= maxWarningKinds {
			// Bounded: further kinds count as one.
			k = warnKey{source, otherFailures}
			x = w.byKey[k]
			msg = otherFailures + ", the first: " + msg
		}
		if x == nil {
			x = &rundir.Warning{Source: source, Message: msg, First: now}
			w.byKey[k] = x
			w.list = append(w.list, x)
		}
		x.Last = now
		x.Count++
		if !failing || cur != k {
			w.failing[source] = k
			c := *x
			notify = &c
		}
	}
	on := w.on
	w.mu.Unlock()
	if notify != nil && on != nil {
		on(*notify)
	}
}

// all returns every kind of failure seen, in the order first seen.
func (w *warnings) all() []rundir.Warning {
	out := []rundir.Warning{}
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.list {
		out = append(out, *x)
	}
	return out
}

// current returns the failures of the sources failing now.
func (w *warnings) current() []rundir.Warning {
	var out []rundir.Warning
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.failing {
		out = append(out, *w.byKey[k])
	}
	slices.SortFunc(out, func(a, b rundir.Warning) int { return a.First.Compare(b.First) })
	return out
}
