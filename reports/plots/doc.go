// Package plots draws a run's time series as the reports show them: PNG
// and SVG figures of stuck sessions, sessions by state, connection release
// latency, PgBouncer, the service's own pool and the load, made with
// gonum/plot and rendered to an io.Writer, as vegeta's are:
//
//	run, err := reports.LoadRun("out/before")
//	if err != nil { … }
//	err = plots.Write(w, plots.Stuck, plots.PNG, run.PlotRun())
//
// With several runs (before, after) each figure puts them side by side on
// shared axes. A long run's lines are thinned to about a point per pixel
// (the thinner); a run read a record at a time need not keep every record
// for that: a Keeper keeps the samples its plots draw, Holds bins its
// episodes' release latencies, and the figures come out byte for byte as
// they would from every record.
//
// Each figure is a column of panels, listed in figures (panels.go): a new
// series is a line added to a panel, a new panel a function added to a
// figure.
package plots
