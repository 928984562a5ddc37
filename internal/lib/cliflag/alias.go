package cliflag

import "flag"

// Alias defines alias as another spelling of the flag name, hidden
// from help.
func Alias(fs *flag.FlagSet, alias, name string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("alias of undefined flag --" + name)
	}
	fs.Var(aliasValue{f.Value}, alias, "the same as --"+name)
}

// aliasValue marks a flag as another spelling of one in help: Visible
// leaves it out, and so the help and completions built on it.
type aliasValue struct{ flag.Value }

// IsBoolFlag lets a bool flag's alias go without a value (--insecure).
func (a aliasValue) IsBoolFlag() bool {
	b, ok := a.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Visible are fs's flags but the hidden aliases, in order.
func Visible(fs *flag.FlagSet) []*flag.Flag {
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
