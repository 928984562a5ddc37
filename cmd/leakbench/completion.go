package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
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
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: want one shell: bash, zsh or fish", errUsage)
	}
	switch pos[0] {
	case "bash":
		writeBash(ctx, c.stdout, false)
	case "zsh":
		writeBash(ctx, c.stdout, true)
	case "fish":
		writeFish(ctx, c.stdout)
	default:
		return fmt.Errorf("%w: no completion for shell %q; want bash, zsh or fish", errUsage, pos[0])
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

// visibleFlags are fs's flags but the hidden aliases, in order.
func visibleFlags(fs *flag.FlagSet) []*flag.Flag {
	var out []*flag.Flag
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, alias := f.Value.(aliasValue); !alias {
			out = append(out, f)
		}
	})
	return out
}

// writeBash writes bash's completion; zsh reads the same through
// bashcompinit.
func writeBash(ctx context.Context, w io.Writer, zsh bool) {
	if zsh {
		fmt.Fprintf(w, "#compdef leakbench\nautoload -U +X bashcompinit && bashcompinit\n")
	}
	fmt.Fprintf(w, "_leakbench() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]}\n\tif [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(w, "\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\treturn\n\tfi\n\tlocal flags=\n\tcase ${COMP_WORDS[1]} in\n", strings.Join(commandNames(), " "))
	for _, name := range commandNames() {
		var flags []string
		for _, f := range visibleFlags(flagsOf(ctx, name)) {
			flags = append(flags, "--"+f.Name)
		}
		flags = append(flags, "--quiet", "--no-color", "--help")
		fmt.Fprintf(w, "\t%s) flags='%s' ;;\n", name, strings.Join(flags, " "))
	}
	fmt.Fprintf(w, "\tesac\n\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\ncomplete -o filenames -F _leakbench leakbench\n")
}

// writeFish writes fish's completion, each flag with its help's first
// clause.
func writeFish(ctx context.Context, w io.Writer) {
	fmt.Fprintf(w, "complete -c leakbench -f\n")
	for _, name := range commandNames() {
		fmt.Fprintf(w, "complete -c leakbench -n __fish_use_subcommand -a %s -d %s\n", name, fishQuote(commands[name].summary))
	}
	for _, name := range commandNames() {
		for _, f := range visibleFlags(flagsOf(ctx, name)) {
			_, usage := flag.UnquoteUsage(f)
			if i := strings.IndexAny(usage, ";(\n"); i > 0 {
				usage = usage[:i]
			}
			fmt.Fprintf(w, "complete -c leakbench -n '__fish_seen_subcommand_from %s' -l %s -d %s\n", name, f.Name, fishQuote(strings.TrimSpace(usage)))
		}
	}
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
