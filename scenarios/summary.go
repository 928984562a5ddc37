package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// WriteSummary writes the end-of-run summary, in the manner of k6's: how
// the run ended, every threshold with its verdict, then each metric with
// avg, min, med, max, p(90), p(95) and p(99) for latencies.
func WriteSummary(w io.Writer, r *Result) error {
	var b bytes.Buffer
	d := r.Ended.Sub(r.Started).Round(time.Millisecond)
	fmt.Fprintf(&b, "  run %s after %s, peak %d users\n", orDefault(r.EndReason, EndCompleted), d, r.PeakUsers)
	names := slices.Sorted(maps.Keys(r.Scenarios))
	for _, n := range names {
		s := r.Scenarios[n]
		fmt.Fprintf(&b, "  scenario %s (%s): %d requests, %d failed, %d aborted, %d iterations",
			n, s.Executor, s.Requests, s.Failures, s.Aborted, s.Iterations)
		if s.DroppedIterations > 0 {
			fmt.Fprintf(&b, ", %d dropped", s.DroppedIterations)
		}
		fmt.Fprintf(&b, ", peak %d users\n", s.PeakUsers)
	}
	if len(r.Thresholds) > 0 {
		b.WriteString("\n  THRESHOLDS\n")
		width := 0
		for _, t := range r.Thresholds {
			width = max(width, len(t.Metric))
		}
		for _, t := range r.Thresholds {
			mark := "✓"
			if !t.Pass {
				mark = "✗"
			}
			fmt.Fprintf(&b, "  %s %-*s  %-14s observed %s", mark, width, t.Metric, t.Expression, fmtNum(t.Observed))
			if t.Samples == 0 {
				b.WriteString(" (no data)")
			}
			if t.AbortOnFail {
				b.WriteString(" [abortOnFail]")
			}
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	rows := [][2]string{}
	add := func(name, value string) { rows = append(rows, [2]string{name, value}) }
	if l, ok := r.Latency[OpAll]; ok {
		add(MetricReqDuration, trendLine(l))
	}
	keys := slices.Sorted(maps.Keys(r.Latency))
	for _, k := range keys {
		if k == OpAll {
			continue
		}
		tag := "method:" + k
		if op, name, ok := strings.Cut(k, ":"); ok {
			tag = "method:" + op + ",name:" + name
		}
		add("  { "+tag+" }", trendLine(r.Latency[k]))
	}
	if r.IterationDuration.Count > 0 {
		add(MetricIterationDuration, trendLine(r.IterationDuration))
	}
	answered := r.Requests - r.ErrorsByKind[KindAborted] - r.ErrorsByKind[KindCanceled]
	add(MetricReqFailed, fmt.Sprintf("%.2f%%  %d out of %d", 100*r.ErrorRate(), r.Failures, answered))
	secs := max(d.Seconds(), 1e-9)
	add(MetricReqs, fmt.Sprintf("%d  %.1f/s", r.Requests, float64(r.Requests)/secs))
	add(MetricReqAborted, fmt.Sprint(r.Aborted))
	add(MetricIterations, fmt.Sprintf("%d  %.1f/s", r.Iterations, float64(r.Iterations)/secs))
	add(MetricDroppedIterations, fmt.Sprint(r.DroppedIterations))
	add(MetricVUsMax, fmt.Sprint(r.PeakUsers))
	var kinds []string
	for _, k := range kindList {
		if n := r.ErrorsByKind[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
		}
	}
	if len(kinds) > 0 {
		add("errors by kind", strings.Join(kinds, " "))
	}
	if r.Reinits+r.EndedSessions+r.AbortedUsers > 0 {
		add("sessions", fmt.Sprintf("%d re-initialized after 404, %d ended by endSession, %d users gave up initializing",
			r.Reinits, r.EndedSessions, r.AbortedUsers))
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row[0]))
	}
	for _, row := range rows {
		fmt.Fprintf(&b, "  %s%s: %s\n", row[0], " "+strings.Repeat(".", width-len(row[0])+2), row[1])
	}
	for _, s := range r.ErrorSamples {
		fmt.Fprintf(&b, "  error sample: %s\n", s)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func trendLine(l LatencyStats) string {
	if l.Count == 0 {
		return "no data"
	}
	return fmt.Sprintf("avg=%s min=%s med=%s max=%s p(90)=%s p(95)=%s p(99)=%s count=%d",
		ms(l.MeanMs), ms(l.MinMs), ms(l.P50Ms), ms(l.MaxMs), ms(l.P90Ms), ms(l.P95Ms), ms(l.P99Ms), l.Count)
}

// ms formats milliseconds as k6 does: µs below 1 ms, s above 1 s.
func ms(v float64) string {
	switch {
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 1000:
		return fmt.Sprintf("%.2fms", v)
	}
	return fmt.Sprintf("%.2fs", v/1000)
}

func fmtNum(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
