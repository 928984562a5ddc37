package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// The hidden worker subcommand: a process run --workers starts of this
// very binary. It is registered here rather than in main.go's table so
// that the table stays the user's commands.
func init() {
	commands["worker"] = command{"(internal) one worker process of run --workers: its slice of the plan, given on standard input", cmdWorker}
}

// cmdWorker plays the slice of the plan its parent sends on standard
// input; the end of that input (the parent stopped it, or died) stops it.
func cmdWorker(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: leakbench worker takes no argument; it is started by leakbench run --workers", cliflag.ErrUsage)
	}
	return workers.Serve(ctx, os.Stdin, os.Stderr)
}

// workersFlags are run's --workers and --source-addrs.
type workersFlags struct {
	count, sources string
}

func addWorkersFlags(fs *flag.FlagSet) *workersFlags {
	w := &workersFlags{}
	fs.StringVar(&w.count, "workers", "", "play the load as `N` worker processes of leakbench on this machine, one processor each (GOMAXPROCS=1), merged exactly into one run; auto: one per core, more when the users need more open files than one process may hold")
	fs.StringVar(&w.sources, "source-addrs", "", "dial the users' connections from these local `ADDRS` (comma-separated), spread over the workers: past one address's local ports (ip_local_port_range); a loopback target gets 127.0.0.x addresses without it")
	return w
}

// config reads the flags; a mistake is a usage error (exit 2).
func (w *workersFlags) config() (workers.Config, error) {
	c, err := workers.ParseCount(w.count)
	if err != nil {
		return c, workersExit(err)
	}
	if w.sources != "" {
		if c.SourceAddrs, err = workers.ParseSourceAddrs(w.sources); err != nil {
			return c, workersExit(err)
		}
	}
	return c, nil
}

// workersExit makes the workers' refusals found once the plan is known (a
// budget that does not fit, more workers than users) usage errors: exit 2.
// The reason alone follows "usage: " (the workers' sentinel would only
// say it twice).
func workersExit(err error) error {
	if errors.Is(err, workers.ErrBadInput) && !errors.Is(err, cliflag.ErrUsage) {
		return fmt.Errorf("%w: %s", cliflag.ErrUsage, strings.TrimPrefix(err.Error(), workers.ErrBadInput.Error()+": "))
	}
	return err
}
