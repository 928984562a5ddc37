// Command leakbench load-tests services in front of PostgreSQL — MCP gateways
// first — and proves with forensic evidence whether they leak database
// connections under real concurrency, and whether a fix makes that go away.
//
// Each subcommand lives in its own file, fills an options struct from its
// flags and calls the library; subcommands return errors and only main exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/redact"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes. 99 for failed verdicts follows k6's convention for failed
// thresholds, so CI systems that know k6 read it right.
const (
	exitOK          = 0
	exitRunFailed   = 1
	exitUsage       = 2
	exitInterrupted = 130
	exitVerdict     = 99
)

// errVerdict means the run worked but its verdict failed.
var errVerdict = errors.New("verdict failed")

// errUsage wraps command-line mistakes.
var errUsage = errors.New("usage")

type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

var commands = map[string]command{
	"signoff":  {"run a scenario against the leaky (before) and fixed (after) gateway and compare", cmdSignoff},
	"run":      {"run a scenario against one gateway variant and write a run directory", cmdRun},
	"soak":     {"hold a constant load, cool down, and judge each resource's slope (R²) for slow leaks", cmdSoak},
	"capacity": {"find the largest load the service holds every limit at (before and after the fix)", cmdCapacity},
	"merge":    {"add up the run directories of the shards of one run (run --shard i/N) into one", cmdMerge},
	"k8s":      {"render Kubernetes manifests: an Indexed Job of N shards, the scenario, a results claim, the merge", cmdK8s},
	"report":   {"re-render report.md of a run directory from its summary.json", cmdReport},
	"compare":  {"compare two run directories (before, after) and write the verdict", cmdCompare},
	"gateway":  {"serve the reference MCP gateway (for your own experiments)", cmdGateway},
	"upstream": {"serve the slow upstream HTTP service the gateway's call_upstream tool calls", cmdUpstream},
	"up":       {"start a stack (docker, local or external), print its endpoints, wait for Ctrl-C", cmdUp},
	"images":   {"build the docker provider's images (no registry needed) and say where each came from", cmdImages},
	"probe":    {"attach to a running PostgreSQL (and PgBouncer, service metrics) and record leaked connections", cmdProbe},
	"trend":    {"plot a history directory's key figures release after release (HTML, PNG, SVG)", cmdTrend},
	"version":  {"print leakbench's version", func(context.Context, []string) error { fmt.Println(version); return nil }},

	"faultproxy": {"(internal) the docker stack's fault proxies: Toxiproxy, one proxy per --link", cmdFaultproxy},
}

func usage() {
	fmt.Fprintf(os.Stderr, "leakbench %s — proves whether a service leaks PostgreSQL connections under load.\n\nUsage: leakbench COMMAND [flags]\n\nCommands:\n", version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'leakbench COMMAND -h' for a command's flags.\nExit codes: 0 pass, 99 a verdict failed, 2 bad usage, 130 interrupted, 1 the run could not be done.\n")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(exitUsage)
		}
		return
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "leakbench: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(exitUsage)
	}
	// The first Ctrl-C cancels the run's context: the run stops its load,
	// stops everything it started and writes what it has. A second Ctrl-C
	// is not caught and ends the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := cmd.run(ctx, os.Args[2:])
	stop()
	os.Exit(exitCode(err))
}

func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, new(*exitError)):
		fmt.Fprintf(os.Stderr, "leakbench: %s\n", redact.String(err.Error()))
		return exitErrorCode(err)
	case errors.Is(err, errVerdict):
		fmt.Fprintf(os.Stderr, "leakbench: %s\n", redact.String(err.Error()))
		return exitVerdict
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "leakbench: %s\n", redact.String(err.Error()))
		return exitUsage
	case errors.Is(err, runner.ErrInterrupted):
		fmt.Fprintf(os.Stderr, "leakbench: interrupted; everything it started was stopped (a run directory, if any, says so)\n")
		return exitInterrupted
	default:
		fmt.Fprintf(os.Stderr, "leakbench: %s\n", redact.String(err.Error()))
		return exitRunFailed
	}
}

// Every subcommand parses its arguments one way: flags may come before,
// between or after the positional arguments (leakbench merge A B --out D,
// leakbench trend --out D HISTORY), and "--" ends the flags. parseFlags is
// for the subcommands that take no positional argument, parseArgs for
// those that do.

// parseFlags parses args, turning flag errors into usage errors; a
// positional argument is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	pos, err := parseArgs(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	return err
}

// parseArgs parses args with fs, flags anywhere among the positional
// arguments, and returns the positional arguments in their order.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(os.Stderr)
	var pos []string
	for rest := args; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		left := fs.Args()
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			return append(pos, left...), nil // after "--", nothing is a flag
		}
		if len(left) > 0 {
			pos = append(pos, left[0])
			left = left[1:]
		}
		rest = left
	}
	return pos, nil
}
