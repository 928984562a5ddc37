package completion

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Command is one subcommand as the scripts offer it.
type Command struct {
	Name string
	// Summary is its one line in the command list (fish shows it).
	Summary string
	// Flags are its flags, the hidden aliases left out.
	Flags []*flag.Flag
}

// Bash writes bash's completion of cmds; zsh reads the same through
// bashcompinit. global are the flags every command takes besides its own.
func Bash(w io.Writer, cmds []Command, global []string, zsh bool) {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name
	}
	if zsh {
		fmt.Fprintf(w, "#compdef leakbench\nautoload -U +X bashcompinit && bashcompinit\n")
	}
	fmt.Fprintf(w, "_leakbench() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]}\n\tif [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(w, "\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\treturn\n\tfi\n\tlocal flags=\n\tcase ${COMP_WORDS[1]} in\n", strings.Join(names, " "))
	for _, c := range cmds {
		var flags []string
		for _, f := range c.Flags {
			flags = append(flags, "--"+f.Name)
		}
		flags = append(flags, global...)
		fmt.Fprintf(w, "\t%s) flags='%s' ;;\n", c.Name, strings.Join(flags, " "))
	}
	fmt.Fprintf(w, "\tesac\n\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\ncomplete -o filenames -F _leakbench leakbench\n")
}

// Fish writes fish's completion of cmds, each flag with its help's first
// clause.
func Fish(w io.Writer, cmds []Command) {
	fmt.Fprintf(w, "complete -c leakbench -f\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c leakbench -n __fish_use_subcommand -a %s -d %s\n", c.Name, fishQuote(c.Summary))
	}
	for _, c := range cmds {
		for _, f := range c.Flags {
			_, usage := flag.UnquoteUsage(f)
			if i := strings.IndexAny(usage, ";(\n"); i > 0 {
				usage = usage[:i]
			}
			fmt.Fprintf(w, "complete -c leakbench -n '__fish_seen_subcommand_from %s' -l %s -d %s\n", c.Name, f.Name, fishQuote(strings.TrimSpace(usage)))
		}
	}
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
