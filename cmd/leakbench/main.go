// Command leakbench load-tests services in front of PostgreSQL — MCP gateways
// first — and proves with forensic evidence whether they leak database
// connections under real concurrency, and whether a fix makes that go away.
//
// Each subcommand lives in its own file, fills an options struct from its
// flags and calls the library; subcommands return errors and only main exits
// (the codes: exitcodes.go). A subcommand gets its output streams and
// environment as values (cli.go), so that the whole command line runs
// in-process in tests.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/leakbench/leakbench/internal/lib/selfprofile"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// commit is the commit the binary was built from, set by the Makefile
// (-ldflags -X main.commit=…) for builds where Go stamps no VCS
// information (GOFLAGS=-buildvcs=false, a copy of the tree without .git).
var commit = ""

// command is one subcommand. run is a func(context.Context, *cli,
// []string) error — or, for a subcommand that prints to os.Stdout itself,
// a func(context.Context, []string) error (cli.call runs both).
type command struct {
	summary string
	run     any
}

var commands = map[string]command{
	"init":     {"write a starter scenario from an MCP service's own tools/list (--target URL)", cmdInit},
	"signoff":  {"run a scenario against the leaky (before) and fixed (after) gateway — or two builds of your own service — and compare", cmdSignoff},
	"run":      {"run a scenario against one gateway variant or your own service and write a run directory", cmdRun},
	"soak":     {"hold a constant load, cool down, and judge each resource's slope (R²) for slow leaks", cmdSoak},
	"capacity": {"find the largest load the service holds every limit at (before and after the fix)", cmdCapacity},
	"merge":    {"add up the run directories of the shards of one run (run --shard i/N) into one", cmdMerge},
	"k8s":      {"render Kubernetes manifests: an Indexed Job of N shards, the scenario, a results claim, the merge", cmdK8s},
	"scale":    {"change the users of a running externally-controlled scenario (run --dashboard)", cmdScale},
	"report":   {"re-render report.md of a run directory from its summary.json", cmdReport},
	"compare":  {"compare two run directories (before, after) and write the verdict", cmdCompare},
	"gateway":  {"serve the reference MCP gateway (for your own experiments)", cmdGateway},
	"upstream": {"serve the slow upstream HTTP service the gateway's call_upstream tool calls", cmdUpstream},
	"up":       {"start a stack (docker, local or external), print its endpoints, wait for Ctrl-C", cmdUp},
	"images":   {"build the docker provider's images (no registry needed) and say where each came from", cmdImages},
	"probe":    {"attach to a running PostgreSQL (and PgBouncer, service metrics) and record leaked connections", cmdProbe},
	"trend":    {"plot a history directory's key figures release after release (HTML, PNG, SVG)", cmdTrend},
	"version":  {"print leakbench's version, commit and Go version", cmdVersion},

	"faultproxy": {"(internal) the docker stack's fault proxies: Toxiproxy, one proxy per --link", cmdFaultproxy},
}

func main() {
	// The first Ctrl-C cancels the run's context: the run stops its load,
	// stops everything it started and writes what it has. A second Ctrl-C
	// is not caught and ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	c := newCLI(os.Stdout, os.Stderr, os.Getenv)
	c.lookup = os.LookupEnv
	stopProfiles := selfprofile.Start(os.Getenv, os.Stderr)
	code := c.main(ctx, os.Args[1:])
	stopProfiles()
	stop()
	os.Exit(code)
}
