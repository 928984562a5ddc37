package plan

// Templates in step names, URIs and arguments.
//
// A string may hold placeholders {{user}}, {{iteration}}, {{scenario}},
// {{randInt LO HI}} and {{pick A B C}}; an argument value written as
// {$pick: [v1, v2, ...]} is replaced by one of its values, whatever their
// type. A string that is exactly one numeric placeholder ({{user}},
// {{iteration}}, {{randInt ...}}) becomes a JSON number. Templates are
// compiled once, when the plan is checked, and rendered straight to JSON
// bytes per request.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/userdata"
)

// Template limits: a bound on what one request body can grow to.
const (
	// MaxNesting bounds how deep a plan's values (arguments, bodies)
	// nest, and a scenario file's values with them.
	MaxNesting     = 32
	maxRandIntSpan = 1 << 53
)

// Vars is what a template can refer to while rendering: the engine keeps
// one per virtual user.
type Vars struct {
	User      int    // the user's index in the run (also picks its token)
	Iteration int64  // the user's iteration in its scenario, from 0
	Scenario  string // the scenario's name
	Rand      *rand.Rand
	// Captured holds the user's {{vars.NAME}} by slot
	// (CompiledScenario.Vars), set by the captures of its steps.
	Captured []Captured
	// Data and Row: the user's row of the scenario's data file
	// ({{data.COLUMN}}); Data is nil without one.
	Data *userdata.Table
	Row  int
}

// Captured is one captured value: its raw JSON and its text (a string's
// value, else the JSON). Set is false until a capture finds it.
type Captured struct {
	Raw, Text string
	Set       bool
}

type tkind uint8

const (
	tConst  tkind = iota // constant JSON value: json
	tString              // string with placeholders: parts
	tNum                 // one numeric placeholder, rendered as a JSON number
	tPick                // one of items
	tArray               // items
	tObject              // keys (pre-encoded, with ':') and items
	tVar                 // exactly one {{vars.NAME}}: the captured JSON value as it is
	tData                // exactly one {{data.COLUMN}}: the cell (a string, or a JSON file's value)
)

// Template is a compiled template value: arguments of a request, or one
// of their values.
type Template struct {
	kind  tkind
	json  []byte // tConst
	text  string // tConst holding a string: its text
	parts []tpart
	items []*Template
	keys  [][]byte
}

type fnKind uint8

const (
	fnText fnKind = iota
	fnUser
	fnIteration
	fnScenario
	fnRandInt
	fnPick
	fnVar  // {{vars.NAME}}: slot
	fnData // {{data.COLUMN}}: slot is the column
)

// tpart is literal text or one placeholder of a string template.
type tpart struct {
	fn     fnKind
	text   string
	lo, hi int64
	words  []string
	name   string // fnVar, fnData: the variable or column
	slot   int    // ... bound by bind
}

// templateFuncs names the placeholders, for error messages.
const templateFuncs = "user, iteration, scenario, randInt LO HI, pick A B ..., vars.NAME, data.COLUMN"

// compileString compiles a string that may hold placeholders.
func compileString(s string) (*Template, error) {
	var parts []tpart
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("template %q: %q is not closed by %q", textutil.Truncate(s, 60), "{{", "}}")
		}
		if i > 0 {
			parts = append(parts, tpart{fn: fnText, text: rest[:i]})
		}
		p, err := compilePlaceholder(rest[i+2 : i+2+j])
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", textutil.Truncate(s, 60), err)
		}
		parts = append(parts, p)
		rest = rest[i+2+j+2:]
	}
	if len(parts) == 0 {
		b, _ := json.Marshal(s)
		return &Template{kind: tConst, json: b, text: s}, nil
	}
	if rest != "" {
		parts = append(parts, tpart{fn: fnText, text: rest})
	}
	if len(parts) == 1 && (parts[0].fn == fnUser || parts[0].fn == fnIteration || parts[0].fn == fnRandInt) {
		return &Template{kind: tNum, parts: parts}, nil
	}
	if len(parts) == 1 && parts[0].fn == fnVar {
		return &Template{kind: tVar, parts: parts}, nil
	}
	if len(parts) == 1 && parts[0].fn == fnData {
		return &Template{kind: tData, parts: parts}, nil
	}
	return &Template{kind: tString, parts: parts}, nil
}

func compilePlaceholder(src string) (tpart, error) {
	f := strings.Fields(src)
	if len(f) == 0 {
		return tpart{}, fmt.Errorf("empty placeholder {{}}; want one of %s", templateFuncs)
	}
	args := f[1:]
	noArgs := func(fn fnKind) (tpart, error) {
		if len(args) > 0 {
			return tpart{}, fmt.Errorf("{{%s}} takes no arguments", f[0])
		}
		return tpart{fn: fn}, nil
	}
	if name, ok := strings.CutPrefix(f[0], "vars."); ok {
		if !varName.MatchString(name) {
			return tpart{}, fmt.Errorf("{{%s}}: want vars.NAME, NAME letters, digits and '_'", textutil.Truncate(f[0], 40))
		}
		p, err := noArgs(fnVar)
		p.name = name
		return p, err
	}
	if name, ok := strings.CutPrefix(f[0], "data."); ok {
		if name == "" {
			return tpart{}, errors.New("{{data.}}: want data.COLUMN")
		}
		p, err := noArgs(fnData)
		p.name = name
		return p, err
	}
	switch f[0] {
	case "user":
		return noArgs(fnUser)
	case "iteration":
		return noArgs(fnIteration)
	case "scenario":
		return noArgs(fnScenario)
	case "randInt":
		if len(args) != 2 {
			return tpart{}, errors.New("{{randInt LO HI}} takes two integers")
		}
		lo, err1 := strconv.ParseInt(args[0], 10, 64)
		hi, err2 := strconv.ParseInt(args[1], 10, 64)
		switch {
		case err1 != nil || err2 != nil:
			return tpart{}, fmt.Errorf("{{randInt %s %s}}: bounds must be integers", args[0], args[1])
		case lo > hi:
			return tpart{}, fmt.Errorf("{{randInt %d %d}}: LO must be <= HI", lo, hi)
		case hi/2-lo/2 >= maxRandIntSpan/2:
			return tpart{}, fmt.Errorf("{{randInt %d %d}}: range wider than 2^53", lo, hi)
		}
		return tpart{fn: fnRandInt, lo: lo, hi: hi}, nil
	case "pick":
		if len(args) == 0 {
			return tpart{}, errors.New("{{pick A B ...}} needs at least one word")
		}
		return tpart{fn: fnPick, words: args}, nil
	}
	return tpart{}, fmt.Errorf("unknown placeholder {{%s}}; want one of %s", f[0], templateFuncs)
}

// compileValue compiles an argument value (as read from YAML or JSON:
// map[string]any, []any, string, numbers, bool, nil). In promptMode every
// leaf must be a scalar and renders as a string, since prompt arguments
// are strings.
func compileValue(v any, promptMode bool, depth int) (*Template, error) {
	if depth > MaxNesting {
		return nil, fmt.Errorf("arguments nested deeper than %d levels", MaxNesting)
	}
	switch v := v.(type) {
	case string:
		return compileString(v)
	case map[string]any:
		if pick, ok := v["$pick"]; ok {
			list, isList := pick.([]any)
			if len(v) != 1 || !isList || len(list) == 0 {
				return nil, errors.New("$pick must be the only key of its map and hold a non-empty list")
			}
			n := &Template{kind: tPick}
			for _, item := range list {
				c, err := compileValue(item, promptMode, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, c)
			}
			return n, nil
		}
		if promptMode {
			return nil, errors.New("prompt arguments must be strings, numbers or booleans")
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // as encoding/json orders map keys
		n := &Template{kind: tObject}
		for _, k := range keys {
			c, err := compileValue(v[k], false, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			n.keys = append(n.keys, append(textutil.AppendJSONString(nil, k), ':'))
			n.items = append(n.items, c)
		}
		return fold(n), nil
	case []any:
		if promptMode {
			return nil, errors.New("prompt arguments must be strings, numbers or booleans")
		}
		n := &Template{kind: tArray}
		for i, item := range v {
			c, err := compileValue(item, false, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			n.items = append(n.items, c)
		}
		return fold(n), nil
	}
	if promptMode {
		if v == nil {
			return nil, errors.New("prompt arguments must be strings, numbers or booleans, not null")
		}
		return compileString(fmt.Sprint(v))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &Template{kind: tConst, json: b}, nil
}

// fold turns an array or object of constants into one constant.
func fold(n *Template) *Template {
	for _, c := range n.items {
		if c.kind != tConst {
			return n
		}
	}
	return &Template{kind: tConst, json: n.AppendJSON(nil, nil)}
}

// compileArgs compiles a map of arguments into one object template (nil
// for no arguments).
func compileArgs(args map[string]any, promptMode bool) (*Template, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if promptMode {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		n := &Template{kind: tObject}
		for _, k := range keys {
			c, err := compileValue(args[k], true, 1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			n.keys = append(n.keys, append(textutil.AppendJSONString(nil, k), ':'))
			n.items = append(n.items, stringified(c))
		}
		return fold(n), nil
	}
	return compileValue(args, false, 0)
}

// stringified makes a prompt-argument node render as a JSON string.
func stringified(n *Template) *Template {
	switch n.kind {
	case tNum, tVar, tData:
		return &Template{kind: tString, parts: n.parts}
	case tPick:
		for i, c := range n.items {
			n.items[i] = stringified(c)
		}
	}
	return n
}

// constant reports whether n renders the same every time.
func (n *Template) constant() bool { return n == nil || n.kind == tConst }

// Fixed returns the JSON of a template that renders the same every time;
// ok is false for one that does not (render it with AppendJSON).
func (n *Template) Fixed() (b []byte, ok bool) { return n.json, n.kind == tConst }

// AppendJSON renders n as JSON. c may be nil for fixed templates only.
func (n *Template) AppendJSON(b []byte, c *Vars) []byte {
	switch n.kind {
	case tConst:
		return append(b, n.json...)
	case tNum:
		return n.parts[0].appendText(b, c)
	case tVar:
		if v := c.Captured[n.parts[0].slot]; v.Set {
			return append(b, v.Raw...)
		}
		return append(b, "null"...)
	case tData:
		if c.Data == nil { // a recorded plan, whose data file was not read (bind.go)
			return append(b, "null"...)
		}
		cell, raw := c.Data.CellBytes(c.Row, n.parts[0].slot)
		if raw {
			return append(b, cell...)
		}
		return textutil.AppendJSONString(b, string(cell))
	case tString:
		// Placeholders render ASCII digits or text taken from the plan,
		// so render the text first and escape it as a whole.
		start := len(b)
		b = n.appendText(b, c)
		text := string(b[start:])
		return textutil.AppendJSONString(b[:start], text)
	case tPick:
		return n.items[c.Rand.IntN(len(n.items))].AppendJSON(b, c)
	case tArray:
		b = append(b, '[')
		for i, item := range n.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.AppendJSON(b, c)
		}
		return append(b, ']')
	case tObject:
		b = append(b, '{')
		for i, item := range n.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, n.keys[i]...)
			b = item.AppendJSON(b, c)
		}
		return append(b, '}')
	}
	return b
}

// appendText renders a string node (tConst string, tString, tNum or a
// tPick of those) as plain text.
func (n *Template) appendText(b []byte, c *Vars) []byte {
	switch n.kind {
	case tConst:
		if n.text != "" || string(n.json) == `""` {
			return append(b, n.text...)
		}
		return append(b, n.json...) // a number or boolean
	case tPick:
		return n.items[c.Rand.IntN(len(n.items))].appendText(b, c)
	}
	for i := range n.parts {
		b = n.parts[i].appendText(b, c)
	}
	return b
}

func (p *tpart) appendText(b []byte, c *Vars) []byte {
	switch p.fn {
	case fnUser:
		return strconv.AppendInt(b, int64(c.User), 10)
	case fnIteration:
		return strconv.AppendInt(b, c.Iteration, 10)
	case fnScenario:
		return append(b, c.Scenario...)
	case fnRandInt:
		return strconv.AppendInt(b, p.lo+c.Rand.Int64N(p.hi-p.lo+1), 10)
	case fnPick:
		return append(b, p.words[c.Rand.IntN(len(p.words))]...)
	case fnVar:
		return append(b, c.Captured[p.slot].Text...)
	case fnData:
		if c.Data == nil { // a recorded plan, whose data file was not read (bind.go)
			return b
		}
		cell, _ := c.Data.CellBytes(c.Row, p.slot)
		return append(b, cell...)
	}
	return append(b, p.text...)
}

// Text is a compiled name or URI: a fixed string or a template.
type Text struct {
	fixed string
	n     *Template // nil when fixed
}

func compileText(s string) (Text, error) {
	n, err := compileString(s)
	if err != nil {
		return Text{}, err
	}
	if n.constant() {
		return Text{fixed: s}, nil
	}
	return Text{n: n}, nil
}

// Fixed returns the string of a text without placeholders; ok is false
// for one with placeholders (render it with Render).
func (t Text) Fixed() (text string, ok bool) { return t.fixed, t.n == nil }

// Render renders t into scratch (reused from call to call) and returns it.
func (t Text) Render(c *Vars, scratch *[]byte) string {
	if t.n == nil {
		return t.fixed
	}
	*scratch = t.n.appendText((*scratch)[:0], c)
	return string(*scratch)
}
