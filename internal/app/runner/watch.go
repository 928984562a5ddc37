package runner

import (
	"path/filepath"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine"
)

// Watch follows a run live: internal/app/dashboard's Server. It gets the
// engine's live view (engine.Watcher) and the probes' latest status, both
// read from what they keep anyway; the runner knows nothing of HTTP.
type Watch interface {
	engine.Watcher
	// Probing is called once the probes start, with status, which reads
	// their latest view (probes.Poller.Status) from any goroutine until
	// the run ends.
	Probing(status func() probes.Status)
}

// RequestsWatch is a Watch that also follows the run's request index
// live: the dashboard names the requests that left the stuck sessions
// while the run plays (internal/app/dashboard/livejoin.go).
type RequestsWatch interface {
	// Requests is called before Probing with the run's requests.jsonl,
	// which the engine is about to write (it may not exist yet); the
	// watch only reads it.
	Requests(file string)
}

// watchProbes hands the poller's status to o's watch, if any, and the
// run's request index to a RequestsWatch. The index is the in-process
// engine's: a run played by workers or shards writes its own elsewhere
// and merges it at the end, so such a run's requests are named at the
// end only.
func (o *Options) watchProbes(p *probes.Poller) {
	if o.Watch == nil {
		return
	}
	if rw, ok := o.Watch.(RequestsWatch); ok && o.Shards <= 1 && !o.Workers.On() && o.Dir != "" {
		rw.Requests(filepath.Join(o.Dir, rundir.RequestsFile))
	}
	o.Watch.Probing(p.Status)
}

// engineWatch is o's watch as the engine takes it: a nil interface, not a
// typed nil, without one.
func (o *Options) engineWatch() engine.Watcher {
	if o.Watch == nil {
		return nil
	}
	return o.Watch
}
