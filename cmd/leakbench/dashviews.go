package main

import (
	"context"

	"github.com/leakbench/leakbench/internal/app/capacity"
	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/app/soak"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	capreport "github.com/leakbench/leakbench/reports/capacity"
)

// The commands other than run and signoff call their library through
// these, so that each command's own file changes by a line: the
// dashboard, when asked, starts before the first load (a bad address
// fails then), feeds its view and ends with the command.

// searchCapacity is searchCapacity with the dashboard's capacity view:
// each stage's run plays on the page, and the stage curve gains each
// stage as it is judged.
func (f *dashboardFlags) searchCapacity(ctx context.Context, c *cli, o capacity.Options) (*capreport.Summary, error) {
	v := dashboard.NewCapacityView()
	d, err := f.start(ctx, "capacity", v, c.stderr)
	if err != nil {
		return nil, err
	}
	o.Watch = d.capacityWatch(func() *dashboard.CapacityView { return v })
	sum, err := searchCapacity(ctx, c, o)
	return sum, d.close(err, o.Out)
}

// capacityWatch feeds a capacity view the search: each stage's run a
// part of the page, the curve gaining each stage as it is judged. view
// is asked for only with a dashboard (none: the zero Watch). signoff
// --capacity hands its sign-off view's, so the searches after the sides
// are drawn on the sign-off's page.
func (d *liveDashboard) capacityWatch(view func() *dashboard.CapacityView) capacity.Watch {
	if d == nil {
		return capacity.Watch{}
	}
	v := view()
	return capacity.Watch{Stage: func(search string, i, load int) runner.Watch { return v.Stage(search, i, load) }, Judged: v.Judged}
}

// runSoak is soak.Run with the dashboard's soak view: the phase and the
// slopes so far beside the soak's load and database.
func (f *dashboardFlags) runSoak(ctx context.Context, c *cli, o soak.Options) (*rundir.Summary, error) {
	d, err := f.start(ctx, "soak", dashboard.NewSoakView(o.Settings), c.stderr)
	if err != nil {
		return nil, err
	}
	o.Watch = d.watch()
	sum, err := soak.Run(ctx, o)
	return sum, d.close(err, o.Dir)
}
