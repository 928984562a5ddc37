package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/probes"
)

// dashboardFlags are --dashboard[=ADDR], --dashboard-token-file and
// --dashboard-export, on run, signoff, capacity, soak and probe: one
// registration for all five, one server per invocation, and each
// command's own view (dashboard.View) beside the load and the database.
type dashboardFlags struct {
	addr      addrFlag
	tokenFile *string
	export    *string
}

// addrFlag is a flag that may be given bare (--dashboard: the default
// address) or with a value (--dashboard=ADDR), as k6's dashboard is.
type addrFlag struct {
	set  bool
	addr string
}

func (f *addrFlag) String() string { return f.addr }

// IsBoolFlag lets the flag stand bare; its value then is "true".
func (f *addrFlag) IsBoolFlag() bool { return true }

func (f *addrFlag) Set(v string) error {
	switch v {
	case "true":
		f.set, f.addr = true, dashboard.DefaultAddr
	case "false":
		f.set, f.addr = false, ""
	default:
		f.set, f.addr = true, v
	}
	return nil
}

func addDashboardFlags(fs *flag.FlagSet) *dashboardFlags {
	f := &dashboardFlags{}
	fs.Var(&f.addr, "dashboard", "serve a live web page of the load and the database while the command lasts, with the command's own view (a sign-off's two sides, a capacity search's stages, a soak's slopes, the probe's database alone), at "+dashboard.DefaultAddr+" or at --dashboard=`ADDR` (loopback unless --dashboard-token-file is given)")
	f.tokenFile = fs.String("dashboard-token-file", "", "the dashboard's token: the first line of this `FILE` (16 characters or more), required to bind an address other than loopback; the page is then opened as /?token=TOKEN")
	f.export = fs.String("dashboard-export", "", "at the end, write the dashboard's final page to this `FILE` as one self-contained HTML file (needs --dashboard)")
	return f
}

// liveDashboard is a started dashboard and where its page goes at the
// end; nil when --dashboard was not given, and then every method does
// nothing.
type liveDashboard struct {
	srv    *dashboard.Server
	export string
	// log is where the dashboard says its address and the export: the
	// command's stderr (the URL is printed even with --quiet).
	log io.Writer
}

// start checks the flags and starts the dashboard, before any load: an
// address in use, or not loopback without a token, fails here with a
// usage error naming it. title names the run on the page; view is the
// command's panel (nil for run).
func (f *dashboardFlags) start(ctx context.Context, title string, view dashboard.View, log io.Writer) (*liveDashboard, error) {
	if !f.addr.set {
		if *f.tokenFile != "" || *f.export != "" {
			return nil, fmt.Errorf("%w: --dashboard-token-file and --dashboard-export belong to --dashboard", cliflag.ErrUsage)
		}
		return nil, nil
	}
	srv, err := dashboard.Start(ctx, dashboard.Config{Addr: f.addr.addr, TokenFile: *f.tokenFile, Title: title, View: view})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	how := ""
	if *f.tokenFile != "" {
		how = "?token=TOKEN (the first line of " + *f.tokenFile + ")"
	}
	fmt.Fprintf(log, "dashboard: %s%s\n", srv.URL(), how)
	return &liveDashboard{srv: srv, export: *f.export, log: log}, nil
}

// watch is the dashboard as the runner's hook, nil (not a nil pointer)
// without one.
func (d *liveDashboard) watch() runner.Watch {
	if d == nil {
		return nil
	}
	return d.srv
}

// sides is a sign-off's hook: each side's run is a part of the page
// (nil without a dashboard).
func (d *liveDashboard) sides() func(side string) runner.Watch {
	if d == nil {
		return nil
	}
	return func(side string) runner.Watch { return d.srv.Part(side) }
}

// probing hands the dashboard the probe's status, if there is one.
func (d *liveDashboard) probing(status func() probes.Status) {
	if d != nil {
		d.srv.Probing(status)
	}
}

// close ends the dashboard once the run and its report are written: the
// page links out's report, the export is written, the server stops. It
// returns err joined with the export's error.
func (d *liveDashboard) close(err error, out string) error {
	if d == nil {
		return err
	}
	d.srv.Finish(out)
	// A usage error found after the page started (a flag checked late)
	// stopped the command before any load: there is no page to keep.
	if d.export != "" && !errors.Is(err, cliflag.ErrUsage) {
		if xerr := d.srv.ExportFile(d.export); xerr != nil {
			err = errors.Join(err, xerr)
		} else {
			fmt.Fprintf(d.log, "dashboard: written to %s\n", d.export)
		}
	}
	d.srv.Close()
	return err
}
