package probe

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/lib/tty"
	"github.com/leakbench/leakbench/probes"
)

// liveView prints the probe's status once a second: a status line redrawn
// in place on a terminal, plain lines otherwise. Warnings go to errw on
// lines of their own.
type liveView struct {
	mu    sync.Mutex
	out   io.Writer
	errw  io.Writer
	tty   bool
	width int
	drawn bool // a status line is on screen, not yet ended
}

func newLiveView(out, errw io.Writer) *liveView {
	v := &liveView{out: out, errw: errw, width: 120}
	v.tty = tty.Is(out)
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		v.width = n
	}
	return v
}

func (v *liveView) status(st probes.Status) {
	line := statusLine(st)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.tty {
		fmt.Fprintln(v.out, line)
		return
	}
	if r := []rune(line); len(r) > v.width-1 {
		line = string(r[:v.width-2]) + "…"
	}
	fmt.Fprintf(v.out, "\r\x1b[K%s", line)
	v.drawn = true
}

// warn is the probe's OnWarning: it never blocks for long.
func (v *liveView) warn(w rundir.Warning) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endLine()
	msg := w.Message
	if w.Recovered {
		msg = "working again"
	}
	fmt.Fprintf(v.errw, "%s warning: %s: %s\n", w.Last.Local().Format("15:04:05"), w.Source, redact.String(msg))
}

func (v *liveView) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endLine()
}

func (v *liveView) endLine() {
	if v.drawn {
		fmt.Fprintln(v.out)
		v.drawn = false
	}
}

// statusLine is one look at the probe: stuck sessions, the oldest episode
// and its query, pool waiters, the service's pool.
func statusLine(st probes.Status) string {
	s := st.Sample
	var b strings.Builder
	fmt.Fprintf(&b, "%s  ", s.Time.Local().Format("15:04:05"))
	if s.Gap {
		fmt.Fprintf(&b, "postgres: no sample (%s)", firstError(s.Error))
	} else {
		fmt.Fprintf(&b, "stuck %d  idle-in-tx %d  active %d  idle %d", s.StuckIdleInTx, s.States.IdleInTx+s.States.IdleInTxAborted, s.States.Active, s.States.Idle)
	}
	fmt.Fprintf(&b, "  episodes %d (stuck %d)", st.Episodes, st.StuckEpisodes)
	if p := s.PgBouncer; p != nil {
		fmt.Fprintf(&b, "  | pgbouncer waiting %d maxwait %.1fs", p.ClWaiting, p.MaxWaitSeconds)
	}
	if a := st.AppPool; a != nil {
		fmt.Fprintf(&b, "  | app pool %g/%g acquired, %g waits", a.Acquired, a.Max, a.AcquireWaitsTotal)
	}
	if o := s.OldestIdleInTx; o != nil {
		fmt.Fprintf(&b, "  | oldest %.1fs pid %d %s: %s", o.AgeSeconds, o.PID, o.ApplicationName, o.Fingerprint)
	}
	return b.String()
}

func firstError(e string) string {
	first, _, _ := strings.Cut(e, "; ")
	return first
}

func printSummary(w io.Writer, s *rundir.ProbeSummary, dir string) {
	fmt.Fprintf(w, "\n%d samples (%d gaps), %d episodes: %d stuck, %d killed by the timeout; longest hold %.2fs, release p50 %.3fs p99 %.3fs\n",
		s.Samples, s.GapSamples, s.Episodes, s.StuckEpisodes, s.TimeoutTerminated, s.LongestHoldSeconds, s.ReleaseP50Seconds, s.ReleaseP99Seconds)
	if s.PgBouncerSampled {
		fmt.Fprintf(w, "PgBouncer: at most %d clients waiting, longest wait %.2fs, exhausted for %.1fs\n",
			s.PgBouncerMaxClWaiting, s.PgBouncerMaxWaitSeconds, s.PoolExhaustedSeconds)
	}
	if s.AppPoolSampled {
		fmt.Fprintf(w, "Service pool: at most %g of %g acquired, saturated for %.1fs, %g acquires waited\n",
			s.AppPoolMaxAcquired, s.AppPoolMax, s.AppPoolSaturatedSeconds, s.AppPoolAcquireWaits)
	}
	for i, c := range s.Culprits {
		if i == 3 {
			break
		}
		fmt.Fprintf(w, "culprit %d: %d episodes, %.1fs held in all (max %.1fs), %s: %s\n", i+1, c.Episodes, c.TotalHoldSeconds, c.MaxHoldSeconds, c.ApplicationName, c.Fingerprint)
	}
	for _, x := range s.Warnings {
		fmt.Fprintf(w, "warning (%d×): %s: %s\n", x.Count, x.Source, redact.String(x.Message))
	}
	fmt.Fprintf(w, "Written: %s, %s, %s in %s\n", rundir.SamplesFile, rundir.EpisodesFile, rundir.ProbeSummaryFile, dir)
}
