package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/redact"
)

// cli is what a subcommand runs with: its output streams and environment
// as values (k6's test_state), so that tests run the whole command line
// in-process and read what it printed.
type cli struct {
	stdout, stderr io.Writer
	// env reads the environment, as os.Getenv; lookup, when set, as
	// os.LookupEnv (main sets it, so that a variable set empty counts
	// as set; nil: a variable is set when not empty).
	env    func(string) string
	lookup func(string) (string, bool)
	// quiet (--quiet): only the verdict and the report's path are
	// printed; progress lines and tables are not.
	quiet bool
	// color is false with --no-color or NO_COLOR set (no-color.org).
	color bool
	// lastFlags is the flag set the subcommand made last (flagSet): the
	// completion scripts and the CLI reference read a command's flags
	// from it after running it with -h.
	lastFlags *flag.FlagSet
}

// newCLI is a cli on the given streams and environment.
func newCLI(stdout, stderr io.Writer, getenv func(string) string) *cli {
	return &cli{stdout: stdout, stderr: stderr, env: getenv, color: true}
}

// getenv is the environment variable k ("" when unset).
func (c *cli) getenv(k string) string { return c.env(k) }

// lookupEnv is the environment variable k and whether it is set.
func (c *cli) lookupEnv(k string) (string, bool) {
	if c.lookup != nil {
		return c.lookup(k)
	}
	v := c.env(k)
	return v, v != ""
}

// progress is where progress lines go: stderr, nowhere with --quiet.
func (c *cli) progress() io.Writer {
	if c.quiet {
		return io.Discard
	}
	return c.stderr
}

// tables is where summaries and tables go: stdout, nowhere with --quiet.
func (c *cli) tables() io.Writer {
	if c.quiet {
		return io.Discard
	}
	return c.stdout
}

// flagSet is a subcommand's flag set: errors are reported by
// cliflag.ParseArgs in one line, help goes to stdout, grouped (printFlags)
// unless the subcommand gives its own usage.
func (c *cli) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stdout)
	fs.Usage = func() { printFlags(fs.Output(), fs) }
	c.lastFlags = fs
	return fs
}

// globalFlags are the flags every subcommand takes, wherever they stand
// before "--": they change how it prints, not what it does.
var globalFlags = map[string]func(c *cli){
	"quiet":    func(c *cli) { c.quiet = true },
	"no-color": func(c *cli) { c.color = false },
}

// main runs the command line args (without the program's name) and
// returns the exit code; what goes wrong is printed on c.stderr.
func (c *cli) main(ctx context.Context, args []string) int {
	if c.getenv("NO_COLOR") != "" {
		c.color = false
	}
	args = c.takeGlobalFlags(args)
	if len(args) == 0 {
		c.usage(c.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		if len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				return c.report(args[1], c.call(ctx, args[1], []string{"-h"}))
			}
		}
		c.usage(c.stdout)
		return exitOK
	case "--version", "-version":
		args[0] = "version"
	}
	if _, ok := commands[args[0]]; !ok {
		msg := fmt.Sprintf("unknown command %q", args[0])
		if s := cliflag.Closest(args[0], commandNames()); s != "" {
			msg += fmt.Sprintf("; did you mean `%s`?", s)
		}
		fmt.Fprintf(c.stderr, "leakbench: %s\nRun 'leakbench -h' for the commands.\n", msg)
		return exitUsage
	}
	return c.report(args[0], c.call(ctx, args[0], args[1:]))
}

// takeGlobalFlags removes the global flags from args (up to "--").
func (c *cli) takeGlobalFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if set, ok := globalFlags[strings.TrimLeft(a, "-")]; ok && strings.HasPrefix(a, "-") {
			set(c)
			continue
		}
		out = append(out, a)
	}
	return out
}

// onCLI reports whether the subcommand name runs on a cli (and so prints
// where the cli says); the others print to os.Stdout themselves.
func onCLI(name string) bool {
	_, ok := commands[name].run.(func(context.Context, *cli, []string) error)
	return ok
}

// call runs the subcommand name.
func (c *cli) call(ctx context.Context, name string, args []string) error {
	switch run := commands[name].run.(type) {
	case func(context.Context, *cli, []string) error:
		return run(ctx, c, args)
	case func(context.Context, []string) error:
		return run(ctx, args)
	default:
		return fmt.Errorf("command %s: a run of type %T", name, run)
	}
}

// report prints what err says — one line, secrets masked; for a usage
// error a pointer to the command's help — and returns the exit code.
func (c *cli) report(name string, err error) int {
	code := exitCode(err)
	switch {
	case err == nil || errors.Is(err, flag.ErrHelp):
	case errors.Is(err, runner.ErrInterrupted) && !errors.As(err, new(*exitError)):
		fmt.Fprintf(c.stderr, "leakbench: interrupted; everything it started was stopped (a run directory, if any, says so)\n")
	default:
		msg := strings.TrimPrefix(redact.String(err.Error()), cliflag.ErrUsage.Error()+": ")
		fmt.Fprintf(c.stderr, "leakbench %s: %s\n", name, msg)
		if errors.Is(err, cliflag.ErrUsage) {
			fmt.Fprintf(c.stderr, "Run 'leakbench %s -h' for its flags and examples.\n", name)
		}
	}
	return code
}

// usage prints the list of commands.
func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, "leakbench %s — proves whether a service leaks PostgreSQL connections under load.\n\nUsage: leakbench COMMAND [flags]\n\nCommands:\n", version)
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nEvery command takes --quiet (only the verdict and the report's path) and --no-color (or NO_COLOR).\n")
	fmt.Fprintf(w, "Run 'leakbench COMMAND -h' for a command's flags.\n")
	fmt.Fprintf(w, "Exit codes: %d pass, %d a verdict failed, %d bad usage, %d interrupted, %d the run could not be done.\n",
		exitOK, exitVerdict, exitUsage, exitInterrupted, exitRunFailed)
	fmt.Fprintf(w, "\nExamples:\n  leakbench signoff --profile ci --out out/signoff\n  leakbench run --target http://127.0.0.1:8080/mcp --scenario s.yaml --probe-dsn-file dsn --out out/run\n  leakbench compare --mode regression main/ pr/ --out out/compare\n")
}

// commandNames are the subcommands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		if !hiddenCommands[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// hiddenCommands are run by leakbench itself, never by a user: help,
// completion and the CLI reference leave them out.
var hiddenCommands = map[string]bool{"worker": true}

// cmdVersion prints the version, the commit it was built from and the Go
// version that built it.
func cmdVersion(_ context.Context, c *cli, args []string) error {
	fs := c.flagSet("version")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench version\n\nPrints leakbench's version, the commit it was built from and the Go version that built it.\n")
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	v, commit := buildVersion()
	fmt.Fprintf(c.stdout, "leakbench %s\ncommit %s\n%s %s/%s\n", v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildVersion is the version (main.version, set by the Makefile, else the
// module's) and the VCS commit the binary was built from.
func buildVersion() (v, rev string) {
	v, rev = version, "unknown"
	if commit != "" {
		rev = commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v, rev
	}
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version // go install …@vX.Y.Z
	}
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		rev += " (modified)"
	}
	return v, rev
}
