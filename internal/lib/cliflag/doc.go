// Package cliflag is the flag kit every leakbench subcommand shares: one
// way to read arguments (flags before, between or after the positional
// ones, "--" ending them, a mistyped flag answered with the nearest one),
// secret flags given as a value, a file or an environment variable,
// flags whose defaults come from the environment, hidden aliases of
// renamed flags, help that lists the flags grouped by purpose, and
// ErrUsage, the sentinel of a command-line mistake.
//
// It is apart from cmd/leakbench so that the command keeps only what is
// its own — each subcommand's flag definitions, its help's words and its
// call into the libraries — and so that these rules, which every
// subcommand must follow alike, are tested once, without a command line.
//
//	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
//	dsn := cliflag.NewSecret(fs, "probe-dsn", "LEAKBENCH_PROBE_DSN", "PostgreSQL `DSN`", "dsn")
//	pos, err := cliflag.ParseArgs(fs, args) // errors.Is(err, cliflag.ErrUsage): exit 2
//	v, err := dsn.Value()                   // --probe-dsn, --probe-dsn-file or the environment
package cliflag
