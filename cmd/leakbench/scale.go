package main

import (
	"context"
	"fmt"

	"github.com/leakbench/leakbench/internal/app/dashboard"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// cmdScale asks a run's dashboard to change its users: leakbench scale
// --addr ADDR --vus N [--scenario S] --token-file FILE.
func cmdScale(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("scale")
	addr := fs.String("addr", dashboard.DefaultAddr, "the run's dashboard, `HOST:PORT` (its --dashboard address)")
	vus := fs.Int("vus", -1, "the users the scenario is to run, 0 to its maxVUs (required)")
	scenario := fs.String("scenario", "", "the externally-controlled scenario (default: the plan's only one)")
	tokenFile := fs.String("token-file", "", "the dashboard's token `FILE` (the run's --dashboard-token-file): control needs it (required)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench scale --vus N --token-file FILE [--addr ADDR] [--scenario S]\n\nChanges the users of a run's externally-controlled scenario while it runs, through its\ndashboard; the change is recorded in load.jsonl and summary.json (by \"command\").\n\n")
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *vus < 0:
		return fmt.Errorf("%w: --vus N is required, 0 or more", cliflag.ErrUsage)
	case *tokenFile == "":
		return fmt.Errorf("%w: --token-file FILE is required: control needs the dashboard's token (the run's --dashboard-token-file)", cliflag.ErrUsage)
	}
	ch, err := dashboard.Scale(ctx, *addr, *tokenFile, dashboard.ScaleRequest{Scenario: *scenario, VUs: *vus}) // By: unset is a command
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: %d → %d users at %.1fs\n", ch.Scenario, ch.From, ch.To, ch.ElapsedSeconds)
	return nil
}
