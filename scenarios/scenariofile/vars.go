package scenariofile

// ${KEY} and ${KEY:-default} in scenario files: values from the command
// line (-e KEY=VALUE) or the environment, as docker compose interpolates
// its files.

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrBadVar is matched by ParseVar's errors: a usage error.
var ErrBadVar = errors.New("bad -e value")

// Options are what LoadWith and ParseWith add to Load and Parse.
type Options struct {
	// Vars are the command line's values (-e KEY=VALUE): ${KEY} takes
	// them before the environment's.
	Vars map[string]string
	// LookupEnv reads the environment (nil: os.LookupEnv). NoEnv leaves
	// it out.
	LookupEnv func(key string) (string, bool)
	// NoInterpolation reads ${...} as written (a recorded plan).
	NoInterpolation bool
}

// NoEnv is a LookupEnv that finds nothing: only Vars fill ${KEY}.
func NoEnv(string) (string, bool) { return "", false }

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseVar reads one -e value, KEY=VALUE (VALUE may be empty and may hold
// '='). An error (ErrBadVar) says what is wrong: no '=', or a KEY that is
// not a name ([A-Za-z_][A-Za-z0-9_]*). The error quotes the key, never
// the value (it may be a secret).
func ParseVar(arg string) (key, value string, err error) {
	key, value, ok := strings.Cut(arg, "=")
	if !ok {
		return "", "", fmt.Errorf("%w: %q has no '='; want KEY=VALUE", ErrBadVar, truncKey(arg))
	}
	if !varName.MatchString(key) {
		return "", "", fmt.Errorf("%w: %q is not a variable name; want letters, digits and _, not starting with a digit", ErrBadVar, truncKey(key))
	}
	return key, value, nil
}

// ParseVars reads every -e value; a key given twice keeps the last value,
// as k6 does.
func ParseVars(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	for _, a := range args {
		k, v, err := ParseVar(a)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func truncKey(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// lookup finds key's value: the command line's, then the environment's.
func (o Options) lookup(key string) (string, bool) {
	if v, ok := o.Vars[key]; ok {
		return v, true
	}
	if o.LookupEnv != nil {
		return o.LookupEnv(key)
	}
	return os.LookupEnv(key)
}

// A use of ${KEY} in the file.
type varUse struct {
	name, def  string
	hasDefault bool
	line       int
}

// interpolate fills every ${KEY} and ${KEY:-default} in the scalars of
// doc (values and keys), reporting each problem with its line: a key
// neither the command line nor the environment gives and no default, one
// key given two different defaults, a ${ never closed. $${ is a literal
// ${. A plain scalar whose text changed is typed again (vus: ${VUS:-10}
// is a number); a quoted one stays a string. Aliases are not followed:
// the node they name is filled where it stands.
func (d *ydec) interpolate(doc *yaml.Node, o Options) {
	if o.NoInterpolation {
		return
	}
	var scalars []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			if strings.Contains(n.Value, "${") {
				scalars = append(scalars, n)
			}
		case yaml.DocumentNode, yaml.MappingNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(doc)
	// Every use first, so that two defaults of one key are found wherever
	// they stand.
	defaults := map[string]varUse{}
	for _, n := range scalars {
		uses, err := scanVars(n.Value)
		if err != nil {
			d.errf(n, "", "%v", err)
			continue
		}
		for _, u := range uses {
			if !u.hasDefault {
				continue
			}
			u.line = n.Line
			if first, ok := defaults[u.name]; ok && first.def != u.def {
				d.errf(n, "", "${%s} has two defaults: %q here and %q on line %d; give it one", u.name, u.def, first.def, first.line)
				continue
			}
			if _, ok := defaults[u.name]; !ok {
				defaults[u.name] = u
			}
		}
	}
	for _, n := range scalars {
		out, err := expand(n.Value, o)
		if err != nil {
			d.errf(n, "", "%v", err)
			continue
		}
		if out == n.Value {
			continue
		}
		n.Value = out
		if n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			n.Tag = "" // typed again by its new text (ShortTag resolves it)
		}
	}
}

// scanVars lists the ${...} of s.
func scanVars(s string) ([]varUse, error) {
	var out []varUse
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			continue
		}
		if s[i+1] == '$' {
			i++ // $$: a literal $
			continue
		}
		if s[i+1] != '{' || templateNext(s, i) {
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%q: ${ is not closed by }; write $${ for a literal ${", truncKey(s[i:]))
		}
		body := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(body, ":-")
		if !varName.MatchString(name) {
			return nil, fmt.Errorf("${%s}: want ${NAME} or ${NAME:-default}, NAME of letters, digits and _", truncKey(body))
		}
		out = append(out, varUse{name: name, def: def, hasDefault: hasDef})
		i += end
	}
	return out, nil
}

// templateNext reports whether the $ at i is followed by a {{template}}
// ("${{randInt 1 9}}": a dollar sign, then a number), not a variable.
func templateNext(s string, i int) bool { return strings.HasPrefix(s[i+1:], "{{") }

// expand returns s with its ${...} filled and $$ made $.
func expand(s string, o Options) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) || (s[i+1] != '$' && s[i+1] != '{') || templateNext(s, i) {
			b.WriteByte(c)
			continue
		}
		if s[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q: ${ is not closed by }", truncKey(s[i:]))
		}
		name, def, hasDef := strings.Cut(s[i+2:i+end], ":-")
		v, ok := o.lookup(name)
		switch {
		case ok && (v != "" || !hasDef):
			b.WriteString(v)
		case hasDef:
			b.WriteString(def) // unset or empty, as the shell's :-
		default:
			return "", fmt.Errorf("${%s} is not set: give -e %s=VALUE, set %s in the environment, or write ${%s:-default}", name, name, name, name)
		}
		i += end
	}
	return b.String(), nil
}
