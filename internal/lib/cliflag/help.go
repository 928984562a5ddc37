package cliflag

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Group is one heading of a command's help and the flags listed under it.
type Group struct {
	Title string
	Has   func(name string) bool
}

// Names is a set of flag names as a Group's predicate.
func Names(list ...string) func(string) bool {
	set := map[string]bool{}
	for _, n := range list {
		set[n] = true
	}
	return func(n string) bool { return set[n] }
}

// longFlag is a flag of more than one letter at the start of a line of
// flag.PrintDefaults.
var longFlag = regexp.MustCompile(`(?m)^(  )-(\w\w)`)

// PrintGroups prints fs's flags grouped by purpose, under groups in their
// order, as flag.PrintDefaults prints each but with two dashes (defaults
// only where they are not the zero value), leaving out the hidden
// aliases. A flag no group claims is listed last, under "Flags of NAME
// alone"; so are those of own, names a group claims that mean something
// of the command's own there (soak's --baseline is a duration, not a
// stored run), so that every command's help reads alike.
func PrintGroups(w io.Writer, fs *flag.FlagSet, groups []Group, own []string) {
	flags := Visible(fs)
	ownTitle := "Flags of " + fs.Name() + " alone"
	done := map[string]bool{}
	printGroup := func(title string, has func(string) bool) {
		var buf strings.Builder
		vis := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		vis.SetOutput(&buf)
		n := 0
		for _, f := range flags {
			if done[f.Name] || !has(f.Name) || (title != ownTitle && slices.Contains(own, f.Name)) {
				continue
			}
			done[f.Name] = true
			vis.Var(f.Value, f.Name, f.Usage)
			// The default as defined, not the value a flag before -h set.
			vis.Lookup(f.Name).DefValue = f.DefValue
			n++
		}
		if n == 0 {
			return
		}
		vis.PrintDefaults()
		// Two dashes but for one-letter flags (-e, -v), as the messages
		// and examples write them (Go takes both).
		fmt.Fprintf(w, "\n%s:\n%s", title, longFlag.ReplaceAllString(buf.String(), "$1--$2"))
	}
	for _, g := range groups {
		printGroup(g.Title, g.Has)
	}
	printGroup(ownTitle, func(string) bool { return true })
}
