package plots

import (
	"image/color"
	"math"
	"slices"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/internal/format"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const timeLabel = "time since the probe started (s)"

// figures lists the plots in the order reports show them.
func figures() []figure {
	hasSamples := func(r *Run) bool { return len(r.Samples) > 0 }
	return []figure{
		{Stuck, "Sessions idle inside an open transaction: all of them, and those held past the stuck threshold. A leak is a red line that climbs and stays up until the server's timeout kills the sessions.",
			hasSamples, []func(*Run) *panel{stuckPanel}, 3.4 * vg.Inch},
		{States, "Every client backend of the database by pg_stat_activity state, stacked: the top of the stack is the number of server connections in use.",
			hasSamples, []func(*Run) *panel{statesPanel}, 3.4 * vg.Inch},
		{Release, "How long each idle-in-transaction span lasted before the session moved on (connection release latency), on a log scale; spans killed by idle_in_transaction_session_timeout pile up at the dashed line.",
			func(r *Run) bool { return len(r.Episodes) > 0 }, []func(*Run) *panel{releasePanel}, 3.4 * vg.Inch},
		{PgBouncer, "PgBouncer: clients queued for a server connection, and the longest any of them had waited (maxwait).",
			func(r *Run) bool { return hasPgBouncer(r) }, []func(*Run) *panel{bouncerClientsPanel, bouncerWaitPanel}, 2.6 * vg.Inch},
		{Services, "Each service's connections as the database saw them: backends per application (application_name, else client address), with those idle in transaction and those active. A pinned pool is a flat line at its maximum with nothing active.",
			hasApps, []func(*Run) *panel{servicesPanel}, 3.4 * vg.Inch},
		{AppPool, "The service's own connection pool: connections acquired against its maximum, and acquires that had to wait or were given up.",
			func(r *Run) bool { return hasAppPool(r) }, []func(*Run) *panel{appPoolPanel, appPoolWaitsPanel}, 2.6 * vg.Inch},
		{Load, "What the virtual users did, per second: requests and failures, error rate, latency percentiles and active users.",
			func(r *Run) bool { return len(r.Load) > 0 }, []func(*Run) *panel{requestsPanel, errorRatePanel, latencyPanel, usersPanel}, 2.3 * vg.Inch},
	}
}

func hasPgBouncer(r *Run) bool {
	for i := range r.Samples {
		if r.Samples[i].PgBouncer != nil {
			return true
		}
	}
	return false
}

func hasAppPool(r *Run) bool {
	for i := range r.Samples {
		if r.Samples[i].AppPool != nil {
			return true
		}
	}
	return false
}

// origin is time zero of a run's plots: its first sample, else the start
// of its load.
func (r *Run) origin() time.Time {
	if len(r.Samples) > 0 {
		return r.Samples[0].Time
	}
	if r.Summary.Load != nil && !r.Summary.Load.Started.IsZero() {
		return r.Summary.Load.Started
	}
	if len(r.Load) > 0 {
		return r.Load[0].Time.Add(-time.Duration(r.Load[0].ElapsedSeconds * float64(time.Second)))
	}
	return r.Summary.Started
}

func (r *Run) at(t time.Time) float64 { return t.Sub(r.origin()).Seconds() }

// sampleXYs is one value per successful sample; ok=false skips a sample.
// A long run's line is thinned to plotBuckets time buckets (see thinner).
func sampleXYs(r *Run, y func(*rundir.Sample) (float64, bool)) plotter.XYs {
	if len(r.Samples) == 0 {
		return nil
	}
	if d := r.discover; d != nil {
		d.points = append(d.points, y)
		return nil
	}
	origin := r.origin()
	th := newThinner(0, r.Samples[len(r.Samples)-1].Time.Sub(origin).Seconds(), r.sampleCount())
	for i := range r.Samples {
		s := &r.Samples[i]
		if v, ok := y(s); ok && !isGap(s) && finite(v) {
			th.add(plotter.XY{X: s.Time.Sub(origin).Seconds(), Y: v})
		}
	}
	return th.done()
}

// isGap reports a sample whose PostgreSQL read failed: the probe marks it,
// or (older runs) it has an error and no backend at all.
func isGap(s *rundir.Sample) bool {
	return s.Gap || (s.Error != "" && s.States == rundir.StateCounts{})
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// addLine adds a line to p with a legend entry; an empty series adds
// nothing.
func (p *panel) addLine(name string, xys plotter.XYs, ls draw.LineStyle, fill color.Color) {
	if len(xys) == 0 {
		return
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	l.LineStyle, l.FillColor = ls, fill
	p.Add(l)
	if name != "" {
		p.addLegend(name, l)
	}
}

// timePanel is a panel over the run's time with the load's span shaded.
func timePanel(r *Run, title, ylabel string) *panel {
	p := newPanel(title, timeLabel, ylabel)
	p.Y.Min = 0
	if l := r.Summary.Load; l != nil && !l.Started.IsZero() && l.Ended.After(l.Started) {
		b := band{from: r.at(l.Started), to: r.at(l.Ended), fill: colBand}
		p.Add(b)
		p.addLegend("load running", b)
	}
	addFaultBands(p, r) // faults.go
	return p
}

// empty marks a panel of a run that has no data for it.
func empty(p *panel, msg string) *panel {
	p.Add(note(msg))
	return p
}

func stuckPanel(r *Run) *panel {
	p := timePanel(r, "Stuck idle-in-transaction sessions", "sessions")
	if len(r.Samples) == 0 {
		return empty(p, "no samples recorded")
	}
	p.addLine("idle in transaction (all)", sampleXYs(r, func(s *rundir.Sample) (float64, bool) {
		return float64(s.States.IdleInTx + s.States.IdleInTxAborted), true
	}), lineStyle(colSky, 1.25, dashDashed), nil)
	label := "stuck"
	if pr := r.Summary.Probe; pr != nil && pr.StuckAfterSeconds > 0 {
		label = "stuck (idle ≥ " + format.Seconds(pr.StuckAfterSeconds) + ")"
	}
	p.addLine(label, sampleXYs(r, func(s *rundir.Sample) (float64, bool) { return float64(s.StuckIdleInTx), true }),
		lineStyle(colVermilion, 2.25, dashSolid), nil)
	return p
}

func statesPanel(r *Run) *panel {
	p := timePanel(r, "Sessions by state (stacked)", "backends")
	if len(r.Samples) == 0 {
		return empty(p, "no samples recorded")
	}
	// From the top of the stack down, each area drawn over the previous.
	layers := []struct {
		name string
		col  color.Color
		top  func(c rundir.StateCounts) int
	}{
		{"other", colGrey, func(c rundir.StateCounts) int { return c.Active + c.Idle + c.IdleInTx + c.IdleInTxAborted + c.Other }},
		{"idle in transaction (aborted)", colPurple, func(c rundir.StateCounts) int { return c.Active + c.Idle + c.IdleInTx + c.IdleInTxAborted }},
		{"idle in transaction", colVermilion, func(c rundir.StateCounts) int { return c.Active + c.Idle + c.IdleInTx }},
		{"idle", colSky, func(c rundir.StateCounts) int { return c.Active + c.Idle }},
		{"active", colBlue, func(c rundir.StateCounts) int { return c.Active }},
	}
	for i, l := range layers {
		// Leave out the rare states when the run never saw them.
		if i < 2 && !slices.ContainsFunc(r.Samples, func(s rundir.Sample) bool { return l.top(s.States) > layers[i+1].top(s.States) }) {
			continue
		}
		xys := sampleXYs(r, func(s *rundir.Sample) (float64, bool) { return float64(l.top(s.States)), true })
		p.addLine(l.name, xys, lineStyle(darker(l.col), 0.5, nil), l.col)
	}
	return p
}

func darker(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.RGBA{uint8(r >> 8 * 7 / 10), uint8(g >> 8 * 7 / 10), uint8(b >> 8 * 7 / 10), 255}
}

func bouncerClientsPanel(r *Run) *panel {
	p := timePanel(r, "PgBouncer clients", "clients")
	if !hasPgBouncer(r) {
		return empty(p, "PgBouncer not sampled")
	}
	p.addLine("active (have a server connection)", sampleXYs(r, func(s *rundir.Sample) (float64, bool) {
		if s.PgBouncer == nil {
			return 0, false
		}
		return float64(s.PgBouncer.ClActive), true
	}), lineStyle(colBlue, 1.25, dashDashed), nil)
	p.addLine("waiting for a server connection", sampleXYs(r, func(s *rundir.Sample) (float64, bool) {
		if s.PgBouncer == nil {
			return 0, false
		}
		return float64(s.PgBouncer.ClWaiting), true
	}), lineStyle(colVermilion, 2, dashSolid), nil)
	return p
}

func bouncerWaitPanel(r *Run) *panel {
	p := timePanel(r, "PgBouncer longest wait (maxwait)", "seconds")
	if !hasPgBouncer(r) {
		return empty(p, "PgBouncer not sampled")
	}
	p.addLine("longest wait of a queued client", sampleXYs(r, func(s *rundir.Sample) (float64, bool) {
		if s.PgBouncer == nil {
			return 0, false
		}
		return s.PgBouncer.MaxWaitSeconds, true
	}), lineStyle(colOrange, 2, dashSolid), nil)
	return p
}

func appPoolPanel(r *Run) *panel {
	p := timePanel(r, "Service connection pool", "connections")
	if !hasAppPool(r) {
		return empty(p, "service pool not scraped")
	}
	get := func(f func(*rundir.AppPoolSample) float64) func(*rundir.Sample) (float64, bool) {
		return func(s *rundir.Sample) (float64, bool) {
			if s.AppPool == nil {
				return 0, false
			}
			return f(s.AppPool), true
		}
	}
	p.addLine("max", sampleXYs(r, get(func(a *rundir.AppPoolSample) float64 { return a.Max })), lineStyle(colBlack, 1.25, dashDashed), nil)
	p.addLine("open", sampleXYs(r, get(func(a *rundir.AppPoolSample) float64 { return a.Total })), lineStyle(colSky, 1.25, dashLong), nil)
	p.addLine("acquired", sampleXYs(r, get(func(a *rundir.AppPoolSample) float64 { return a.Acquired })), lineStyle(colVermilion, 2.25, dashSolid), nil)
	p.addLine("sessions never closed", sampleXYs(r, get(func(a *rundir.AppPoolSample) float64 { return a.UnclosedSessions })), lineStyle(colPurple, 1.5, dashDotted), nil)
	return p
}

// counterRate turns a counter into a per-second rate between successive
// scrapes; a counter that goes down (service restart) gives no point. key
// names the line: a run whose samples a Keeper reduced has it drawn from
// all of them already (r.Rates).
func counterRate(r *Run, key string, f func(*rundir.AppPoolSample) float64) plotter.XYs {
	if len(r.Samples) == 0 {
		return nil
	}
	if d := r.discover; d != nil {
		d.rates = append(d.rates, rateSeries{key, f})
		return nil
	}
	if r.Rates != nil {
		if xys, ok := r.Rates.lines[key]; ok {
			return xys
		}
	}
	l := rateLine{th: newThinner(0, r.at(r.Samples[len(r.Samples)-1].Time), r.sampleCount()), f: f, origin: r.origin()}
	for i := range r.Samples {
		l.add(&r.Samples[i])
	}
	return l.th.done()
}

func appPoolWaitsPanel(r *Run) *panel {
	p := timePanel(r, "Service pool acquires that waited or were given up", "per second")
	if !hasAppPool(r) {
		return empty(p, "service pool not scraped")
	}
	p.addLine("acquires that had to wait", counterRate(r, "acquire_waits", func(a *rundir.AppPoolSample) float64 { return a.AcquireWaitsTotal }),
		lineStyle(colOrange, 2, dashSolid), nil)
	p.addLine("acquires canceled", counterRate(r, "canceled_acquires", func(a *rundir.AppPoolSample) float64 { return a.CanceledAcquiresTotal }),
		lineStyle(colVermilion, 1.5, dashDashed), nil)
	return p
}

// loadXYs is one value per second of load.jsonl.
func loadXYs(r *Run, y func(*rundir.LoadPoint) float64) plotter.XYs {
	if len(r.Load) == 0 {
		return nil
	}
	origin := r.origin()
	xys := newThinner(r.Load[0].Time.Sub(origin).Seconds(), r.Load[len(r.Load)-1].Time.Sub(origin).Seconds(), len(r.Load))
	for i := range r.Load {
		l := &r.Load[i]
		if v := y(l); finite(v) {
			xys.add(plotter.XY{X: l.Time.Sub(origin).Seconds(), Y: v})
		}
	}
	return xys.done()
}

func requestsPanel(r *Run) *panel {
	p := timePanel(r, "Requests", "per second")
	if len(r.Load) == 0 {
		return empty(p, "load.jsonl not recorded")
	}
	// A line covers one engine interval: counts become rates with the
	// line's own requests per second.
	perSecond := func(n int64) func(*rundir.LoadPoint) float64 {
		return func(l *rundir.LoadPoint) float64 {
			if l.Requests == 0 {
				return 0
			}
			return float64(n) * l.ReqPerSecond / float64(l.Requests)
		}
	}
	p.addLine("requests", loadXYs(r, func(l *rundir.LoadPoint) float64 { return l.ReqPerSecond }), lineStyle(colBlue, 2, dashSolid), nil)
	p.addLine("failed", loadXYs(r, func(l *rundir.LoadPoint) float64 { return perSecond(l.Failures)(l) }), lineStyle(colVermilion, 1.75, dashDashed), nil)
	if slices.ContainsFunc(r.Load, func(l rundir.LoadPoint) bool { return l.DroppedIterations > 0 }) {
		p.addLine("dropped iterations", loadXYs(r, func(l *rundir.LoadPoint) float64 { return perSecond(l.DroppedIterations)(l) }), lineStyle(colPurple, 1.25, dashDotted), nil)
	}
	if hasHTTP(r) {
		// The http steps' share of the requests above, and of the failures.
		p.addLine("of which http steps", loadXYs(r, func(l *rundir.LoadPoint) float64 { return perSecond(l.HTTPRequests)(l) }), lineStyle(colSky, 1.5, dashDotted), nil)
		p.addLine("http steps failed", loadXYs(r, func(l *rundir.LoadPoint) float64 { return perSecond(l.HTTPFailures)(l) }), lineStyle(colPurple, 1.25, dashDashed), nil)
	}
	return p
}

// hasHTTP: the run's plan had http steps that ended (load.jsonl's http_*
// figures).
func hasHTTP(r *Run) bool {
	return slices.ContainsFunc(r.Load, func(l rundir.LoadPoint) bool { return l.HTTPRequests > 0 })
}

func errorRatePanel(r *Run) *panel {
	p := timePanel(r, "Error rate", "% of requests")
	if len(r.Load) == 0 {
		return empty(p, "load.jsonl not recorded")
	}
	p.addLine("failed / requests", loadXYs(r, func(l *rundir.LoadPoint) float64 {
		if l.Requests == 0 {
			return 0
		}
		return 100 * float64(l.Failures) / float64(l.Requests)
	}), lineStyle(colVermilion, 2, dashSolid), nil)
	return p
}

func latencyPanel(r *Run) *panel {
	p := timePanel(r, "Latency percentiles", "milliseconds")
	if len(r.Load) == 0 {
		return empty(p, "load.jsonl not recorded")
	}
	p.addLine("p50", loadXYs(r, func(l *rundir.LoadPoint) float64 { return l.P50Ms }), lineStyle(colGreen, 1.5, dashDotted), nil)
	p.addLine("p95", loadXYs(r, func(l *rundir.LoadPoint) float64 { return l.P95Ms }), lineStyle(colOrange, 1.75, dashDashed), nil)
	p.addLine("p99", loadXYs(r, func(l *rundir.LoadPoint) float64 { return l.P99Ms }), lineStyle(colVermilion, 2, dashSolid), nil)
	if hasHTTP(r) {
		p.addLine("http steps p95", loadXYs(r, func(l *rundir.LoadPoint) float64 { return l.HTTPP95Ms }), lineStyle(colSky, 1.5, dashDotted), nil)
	}
	if c := r.Summary.Load; c != nil && c.Config.RequestTimeout > 0 {
		h := hline{y: float64(c.Config.RequestTimeout.Milliseconds()), style: lineStyle(colBlack, 1, dashDashed)}
		p.Add(h)
		p.addLegend("client timeout "+format.Seconds(c.Config.RequestTimeout.Seconds()), h)
	}
	return p
}

func usersPanel(r *Run) *panel {
	p := timePanel(r, "Active virtual users", "users")
	if len(r.Load) == 0 {
		return empty(p, "load.jsonl not recorded")
	}
	p.addLine("active users", loadXYs(r, func(l *rundir.LoadPoint) float64 { return float64(l.ActiveUsers) }), lineStyle(colBlue, 2, dashSolid), nil)
	addScaleMarks(p, r) // scale.go
	return p
}

// hline marks one Y value across the whole width.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, plt *plot.Plot) {
	_, trY := plt.Transforms(&c)
	if y := trY(h.y); y >= c.Min.Y && y <= c.Max.Y {
		c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
	}
}

func (h hline) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

func (h hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

func hasApps(r *Run) bool {
	return slices.ContainsFunc(r.Samples, func(s rundir.Sample) bool { return len(s.Apps) > 0 })
}

// maxServiceLines bounds the applications drawn: the ones with the most
// backends at once.
const maxServiceLines = 4

// servicesPanel draws the database's view of each service's pool: every
// application's backends, and for the largest its idle-in-transaction and
// active ones.
func servicesPanel(r *Run) *panel {
	p := timePanel(r, "Backends per application (database view)", "backends")
	if !hasApps(r) {
		return empty(p, "no backends by application recorded")
	}
	type app struct {
		name      string
		byAddress bool
		most      int
	}
	var apps []app
	find := func(s *rundir.Sample, a app) (rundir.AppConns, bool) {
		for _, c := range s.Apps {
			if c.Name == a.name && c.ByAddress == a.byAddress {
				return c, true
			}
		}
		return rundir.AppConns{}, false
	}
	for i := range r.Samples {
		for _, c := range r.Samples[i].Apps {
			j := slices.IndexFunc(apps, func(a app) bool { return a.name == c.Name && a.byAddress == c.ByAddress })
			if j < 0 {
				apps = append(apps, app{name: c.Name, byAddress: c.ByAddress})
				j = len(apps) - 1
			}
			apps[j].most = max(apps[j].most, c.Total())
		}
	}
	slices.SortStableFunc(apps, func(x, y app) int { return y.most - x.most })
	if len(apps) > maxServiceLines {
		apps = apps[:maxServiceLines]
	}
	cols := []color.Color{colBlue, colGreen, colOrange, colPurple}
	for i, a := range apps {
		name := a.name
		if a.byAddress {
			name += " (by address)"
		}
		line := func(f func(rundir.AppConns) int) plotter.XYs {
			return sampleXYs(r, func(s *rundir.Sample) (float64, bool) {
				c, _ := find(s, a) // absent: no backend at all
				return float64(f(c)), true
			})
		}
		p.addLine(name+": all", line(rundir.AppConns.Total), lineStyle(cols[i], 2, dashSolid), nil)
		if i == 0 {
			p.addLine(name+": idle in transaction", line(func(c rundir.AppConns) int { return c.IdleInTx + c.IdleInTxAborted }),
				lineStyle(colVermilion, 1.5, dashDashed), nil)
			p.addLine(name+": active", line(func(c rundir.AppConns) int { return c.Active }), lineStyle(colSky, 1.25, dashDotted), nil)
		}
	}
	return p
}
