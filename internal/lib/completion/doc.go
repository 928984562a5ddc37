// Package completion writes leakbench's shell completion scripts — bash,
// zsh (bash's, through bashcompinit) and fish — from its subcommands and
// their flags.
//
// It is apart from cmd/leakbench because writing a shell's script is no
// part of parsing a command line: the command only hands over its
// commands and the flag sets they define, read from the flag sets
// themselves so that the scripts cannot fall behind them.
//
//	completion.Bash(os.Stdout, []completion.Command{{Name: "run", Summary: "…", Flags: flags}}, []string{"--help"}, false)
//	completion.Fish(os.Stdout, cmds)
package completion
