//go:build linux

package workers_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
)

// watchLog keeps Play's log and closes started once Play has started
// every worker (its "load: N worker processes" line): from then on the
// workers' commands, guarded by the same mutex, hold their processes.
type watchLog struct {
	mu      sync.Mutex
	b       strings.Builder
	started chan struct{}
	closed  bool
}

func newWatchLog() *watchLog { return &watchLog{started: make(chan struct{})} }

func (w *watchLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if !w.closed && strings.Contains(w.b.String(), "load: ") {
		w.closed = true
		close(w.started)
	}
	return len(p), nil
}

func (w *watchLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// pids are the processes of the workers started so far.
func (c *commands) pids() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, cmd := range c.cmds {
		if cmd.Process != nil {
			out = append(out, cmd.Process.Pid)
		}
	}
	return out
}

// playOut is what workers.Play returned.
type playOut struct {
	res *rundir.LoadResult
	rec *rundir.Workers
	err error
}

// check fails the benchmark unless the run completed with every worker,
// every request answered and every user in.
func (o *playOut) check(b *testing.B, m moonshot, log *watchLog, dir string) {
	b.Helper()
	switch {
	case o.err != nil:
		b.Fatalf("play: %v\nits log:\n%s", o.err, log)
	case o.res == nil || o.rec == nil || !o.rec.Complete:
		b.Fatalf("play left no complete result\nits log:\n%s", log)
	case o.res.Failures != 0:
		b.Fatalf("%d of %d requests failed (by kind %v): %q; the workers' seconds: %s/worker-*/load.jsonl (%s keeps them)",
			o.res.Failures, o.res.Requests, nonZero(o.res.ErrorsByKind), o.res.ErrorSamples, dir, dirEnv)
	case o.res.PeakUsers < m.users:
		b.Fatalf("at most %d of %d users at once", o.res.PeakUsers, m.users)
	}
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// liveCounts are the workers' merged live figures that the benchmark
// follows.
type liveCounts struct {
	discovers, calls, failures float64
	// kinds are the failures by method and kind, for the message.
	kinds map[string]float64
}

// scrapeCounts reads the workers' merged /metrics.
func scrapeCounts(ctx context.Context, addr string) (liveCounts, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return liveCounts{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return liveCounts{}, err
	}
	defer resp.Body.Close()
	c := liveCounts{kinds: map[string]float64{}}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "leakbench_mcp_reqs_total{") && strings.Contains(line, `method="server/discover"`):
			c.discovers += v
		case strings.HasPrefix(line, "leakbench_mcp_reqs_total{") && strings.Contains(line, `method="tools/call"`):
			c.calls += v
		case strings.HasPrefix(line, "leakbench_mcp_req_failures_total{") && v > 0:
			c.failures += v
			c.kinds[line[len("leakbench_mcp_req_failures_total"):i]] += v
		}
	}
	return c, sc.Err()
}

// pollEvery is how often the ramp is followed (the workers send their
// live figures every second).
const pollEvery = 500 * time.Millisecond

// measure follows the ramp until every user is in (its discover
// answered, its listen stream open), then measures the steady window.
// A Play that ends meanwhile is returned as it ended.
func measure(ctx context.Context, b *testing.B, m moonshot, pids []int, srv []*mcptest.Helper, addr string, ramp time.Duration, done <-chan *playOut) (moonshotRun, *playOut) {
	var serverPIDs []int
	for _, h := range srv {
		serverPIDs = append(serverPIDs, h.Cmd.Process.Pid)
	}
	var r moonshotRun
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	wait := func(d time.Duration) *playOut {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case out := <-done:
			return out
		case <-ctx.Done():
			b.Fatalf("the benchmark's time ran out: %v", ctx.Err())
		case <-t.C:
		}
		return nil
	}
	var first time.Time
	var lc liveCounts
	// Every user must be in well within three times the ramp: past it,
	// connections are being refused or retried.
	deadline := time.Now().Add(30*time.Second + 3*ramp)
	for {
		if out := wait(pollEvery); out != nil {
			return r, out
		}
		var err error
		if lc, err = scrapeCounts(ctx, addr); err != nil {
			continue // the workers' first second has not come yet
		}
		now := time.Now()
		if first.IsZero() && lc.discovers > 0 {
			first = now
		}
		// A listen stream's opening is counted by the servers: the
		// workers' merged live figures leave the features out.
		listens := int64(0)
		if m.listen && lc.discovers >= float64(m.users) {
			for _, h := range srv {
				listens += h.Listening(b)
			}
		}
		if lc.discovers >= float64(m.users) && (!m.listen || listens >= int64(m.users)) {
			r.rampUp = now.Sub(first)
			break
		}
		if now.After(deadline) {
			b.Fatalf("%.0f of %d users connected (%d listen streams) after %s; %.0f failures so far: %v", lc.discovers, m.users, listens, now.Sub(first), lc.failures, lc.kinds)
		}
	}
	if out := wait(settle); out != nil {
		return r, out
	}
	// The plan holds its users for hold and 3×settle past the ramp,
	// counted from its start (about when the first user was in).
	end := time.Now().Add(m.hold)
	if last := first.Add(ramp + m.hold + 2*settle); last.Before(end) {
		end = last // the ramp was slow: a shorter window, reported
	}
	lc0, c0, s0, t0 := mustScrape(ctx, b, addr), sumCPU(pids), sumCPU(serverPIDs), time.Now()
	for time.Now().Before(end) {
		r.peakRSS = max(r.peakRSS, sumRSS(pids))
		if out := wait(min(time.Second, time.Until(end))); out != nil {
			return r, out
		}
	}
	lc1, c1, s1, t1 := mustScrape(ctx, b, addr), sumCPU(pids), sumCPU(serverPIDs), time.Now()
	r.cpu, r.serverCPU, r.window = c1-c0, s1-s0, t1.Sub(t0)
	r.calls = int64(lc1.calls - lc0.calls)
	if r.calls <= 0 {
		b.Fatalf("no tools/call answered in the %s window", r.window)
	}
	return r, nil
}

func mustScrape(ctx context.Context, b *testing.B, addr string) liveCounts {
	lc, err := scrapeCounts(ctx, addr)
	if err != nil {
		b.Fatalf("the workers' /metrics: %v", err)
	}
	return lc
}
