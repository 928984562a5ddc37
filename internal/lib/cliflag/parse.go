package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ErrUsage wraps command-line mistakes: a flag that does not parse, a
// value a flag refuses, flags that do not go together. The command exits
// 2 on it and points at its help. It is this package's because the flags
// are where most such mistakes are found; the commands wrap their own
// checks of what the flags say in it too, so that one sentinel means bad
// usage everywhere.
var ErrUsage = errors.New("usage")

// Every subcommand parses its arguments one way: flags may come before,
// between or after the positional arguments (leakbench merge A B --out D,
// leakbench trend --out D HISTORY), and "--" ends the flags. Parse is
// for the subcommands that take no positional argument, ParseArgs for
// those that do.

// Parse parses args, turning flag errors into usage errors; a
// positional argument is a usage error.
func Parse(fs *flag.FlagSet, args []string) error {
	pos, err := ParseArgs(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("%w: unexpected argument %q", ErrUsage, pos[0])
	}
	return err
}

// ParseArgs parses args with fs, flags anywhere among the positional
// arguments, and returns the positional arguments in their order. -h
// prints the help to fs's output (fs.Usage; without one, flag's own
// listing); a flag error is one usage error that names a flag close to a
// mistyped one, not Go's message and all of help.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	help, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(help); fs.Usage = usage }()
	var pos []string
	for rest := args; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(help)
				if usage != nil {
					usage()
				} else {
					fs.PrintDefaults()
				}
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w%s", ErrUsage, err, didYouMean(fs, err))
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

// didYouMean names the flag of fs closest to an undefined one in err.
func didYouMean(fs *flag.FlagSet, err error) string {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if _, alias := f.Value.(aliasValue); !alias {
			names = append(names, f.Name)
		}
	})
	if s := Closest(strings.TrimPrefix(msg, undefined), names); s != "" {
		return fmt.Sprintf("; did you mean `--%s`?", s)
	}
	return ""
}

// Closest is the name nearest to s by edit distance, if it is near enough
// to be a typo (at most a third of its length, at least one edit), or a
// name that s starts or ends; "" when none is.
func Closest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		d := editDistance(s, n)
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if best != "" && bestD <= max(1, len(s)/3) {
		return best
	}
	for _, n := range slices.Sorted(slices.Values(names)) {
		if len(s) >= 3 && (strings.HasPrefix(n, s) || strings.HasSuffix(n, s)) {
			return n
		}
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, counted in bytes
// (flag and command names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
