// Package dashboard serves a run's live web page (--dashboard): the load
// and what PostgreSQL saw, one point a second, over server-sent events.
//
// It reads only what the engine and the probes keep anyway — the engine's
// live snapshot (the counters and histograms /metrics reads) and its last
// line of load.jsonl, and the probes' latest status — once a second, off
// the request path. A page that joins late, reloads or reconnects gets
// the whole history first. The assets are embedded: the page needs no
// network. Export writes the page as one self-contained HTML file.
//
// Safe by default: it binds loopback unless told otherwise, and any
// other address needs a token (Config.TokenFile). Nothing secret reaches
// the page: probe messages are redacted and queries are fingerprints.
//
// A run feeds it through runner.Options.Watch:
//
//	d, err := dashboard.Start(ctx, dashboard.Config{Addr: dashboard.DefaultAddr, Title: "fixed"})
//	if err != nil {
//		return err // the address is in use, or not loopback and no token
//	}
//	defer d.Close()
//	fmt.Fprintln(os.Stderr, "dashboard:", d.URL())
//	sum, err := runner.Run(ctx, runner.Options{ /* … */ Watch: d})
//	// render the report, then:
//	d.Finish(dir) // the page links dir's report.html
//	err = d.ExportFile("dashboard.html")
package dashboard
