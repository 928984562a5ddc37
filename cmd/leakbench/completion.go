package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/internal/lib/completion"
)

// The completion command reads the command table, so it joins the table
// at init: in its literal it would be an initialization cycle.
func init() {
	commands["completion"] = command{"print a shell completion script: bash, zsh or fish", cmdCompletion}
}

// cmdCompletion prints a shell completion script of the commands and
// their flags, read from the flag sets themselves (flagsOf), so that it
// cannot fall behind them.
func cmdCompletion(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("completion")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: leakbench completion bash|zsh|fish\n\nPrints a completion script for the shell: its commands and every command's flags.\n\n")
		printFlags(fs.Output(), fs)
	}
	pos, err := cliflag.ParseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one shell: bash, zsh or fish", cliflag.ErrUsage)
	}
	switch pos[0] {
	case "bash":
		completion.Bash(c.stdout, completionCommands(ctx), everyCommandFlags, false)
	case "zsh":
		completion.Bash(c.stdout, completionCommands(ctx), everyCommandFlags, true)
	case "fish":
		completion.Fish(c.stdout, completionCommands(ctx))
	default:
		return fmt.Errorf("%w: no completion for shell %q; want bash, zsh or fish", cliflag.ErrUsage, pos[0])
	}
	return nil
}

// flagsOf is the flag set of the command name, as it defines it: the
// command run with -h on a cli that prints nowhere. nil for a command
// that prints to os.Stdout itself (no cli to read its flags from).
func flagsOf(ctx context.Context, name string) *flag.FlagSet {
	c := newCLI(io.Discard, io.Discard, func(string) string { return "" })
	if !onCLI(name) {
		return nil
	}
	_ = c.call(ctx, name, []string{"-h"})
	return c.lastFlags
}

// everyCommandFlags are the flags every command takes besides its own
// (globalFlags, and help).
var everyCommandFlags = []string{"--quiet", "--no-color", "--help"}

// completionCommands are the commands as the scripts offer them, each
// with its flags as it defines them (flagsOf).
func completionCommands(ctx context.Context) []completion.Command {
	var cmds []completion.Command
	for _, name := range commandNames() {
		cmds = append(cmds, completion.Command{Name: name, Summary: commands[name].summary, Flags: cliflag.Visible(flagsOf(ctx, name))})
	}
	return cmds
}
