package plan

// Captures and checks: GJSON paths into a request's answer (the JSON-RPC
// result of an MCP step, the JSON body of an http step).

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
)

// Check operators.
const (
	CheckEquals    = "=="
	CheckNotEquals = "!="
	CheckContains  = "contains"
	CheckMatches   = "matches"
	CheckExists    = "exists"
	CheckMissing   = "missing"
)

// Bounds on captures and checks.
const (
	maxPathLen      = 500
	maxCheckExpr    = 1000
	maxChecksByStep = 64
	maxCaptures     = 64
)

// Capture stores the value a GJSON path finds in a step's answer as
// {{vars.NAME}} for the user's later steps.
type Capture struct {
	Name, Path string
}

// Check is an assertion on a step's answer: the value at Path (a GJSON
// path) equals (==), differs from (!=), contains or matches (a regular
// expression) Value, or exists or is missing.
type Check struct {
	// Name is the check's tag in metrics and thresholds (default: its
	// expression, String()).
	Name string
	Path string
	Op   string
	// Value is what == and != compare with (a JSON value as YAML gives it:
	// string, int64, float64, bool, nil, map, list) or the text contains
	// and matches look for.
	Value any
}

// String returns the check's expression, as ParseCheck reads it.
func (c Check) String() string {
	switch c.Op {
	case CheckExists, CheckMissing:
		return c.Path + " " + c.Op
	case CheckContains, CheckMatches:
		s, _ := c.Value.(string)
		return c.Path + " " + c.Op + " " + string(textutil.AppendJSONString(nil, s))
	}
	b, err := json.Marshal(c.Value)
	if err != nil {
		b = []byte("?")
	}
	return c.Path + " " + c.Op + " " + string(b)
}

// ParseCheck reads a check expression: "PATH == VALUE", "PATH != VALUE",
// "PATH contains TEXT", "PATH matches REGEXP", "PATH exists" or "PATH
// missing". VALUE is JSON ("done" in quotes, 42, true, null, {...}) or a
// bare word taken as a string; TEXT and REGEXP are a JSON string or the
// rest of the line. The path ends at the first blank outside brackets and
// quotes.
func ParseCheck(expr string) (Check, error) {
	expr = strings.TrimSpace(expr)
	if len(expr) > maxCheckExpr {
		return Check{}, fmt.Errorf("check longer than %d characters", maxCheckExpr)
	}
	if !utf8.ValidString(expr) {
		return Check{}, errors.New("check is not valid UTF-8")
	}
	path, rest := splitPath(expr)
	if path == "" {
		return Check{}, fmt.Errorf("check %q: want PATH == VALUE, PATH != VALUE, PATH contains TEXT, PATH matches REGEXP, PATH exists or PATH missing", textutil.Truncate(expr, 60))
	}
	if err := CheckPath(path); err != nil {
		return Check{}, err
	}
	rest = strings.TrimSpace(rest)
	c := Check{Path: path}
	for _, op := range []string{CheckEquals, CheckNotEquals, CheckContains, CheckMatches, CheckExists, CheckMissing} {
		after, ok := strings.CutPrefix(rest, op)
		word := op[0] >= 'a'
		if !ok || (word && after != "" && after[0] != ' ' && after[0] != '\t') {
			continue
		}
		c.Op = op
		after = strings.TrimSpace(after)
		switch op {
		case CheckExists, CheckMissing:
			if after != "" {
				return Check{}, fmt.Errorf("check %q: %s takes no value", textutil.Truncate(expr, 60), op)
			}
			return c, nil
		case CheckEquals, CheckNotEquals:
			if after == "" {
				return Check{}, fmt.Errorf("check %q: %s needs a value", textutil.Truncate(expr, 60), op)
			}
			c.Value = literal(after)
			return c, nil
		}
		if after == "" {
			return Check{}, fmt.Errorf("check %q: %s needs a text", textutil.Truncate(expr, 60), op)
		}
		if after[0] == '"' {
			var s string
			if err := json.Unmarshal([]byte(after), &s); err != nil {
				return Check{}, fmt.Errorf("check %q: %s is not a JSON string", textutil.Truncate(expr, 60), textutil.Truncate(after, 40))
			}
			after = s
		}
		c.Value = after
		return c, nil
	}
	return Check{}, fmt.Errorf("check %q: unknown operator %q; want ==, !=, contains, matches, exists or missing", textutil.Truncate(expr, 60), textutil.Truncate(rest, 20))
}

// literal reads a JSON value, or a bare word as a string.
func literal(s string) any {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return s
	}
	return normJSON(v)
}

// normJSON turns json.Number into int64 or float64, as YAML values are.
func normJSON(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = normJSON(x)
		}
	case []any:
		for i, x := range v {
			v[i] = normJSON(x)
		}
	}
	return v
}

// splitPath splits a check expression after its path.
func splitPath(expr string) (string, string) {
	depth, inStr := 0, false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '\\':
			i++
		case c == '"' && depth > 0:
			inStr = true
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case (c == ' ' || c == '\t') && depth <= 0:
			return expr[:i], expr[i:]
		}
	}
	return expr, ""
}

// gjsonModifiers are GJSON's built-in modifiers.
var gjsonModifiers = []string{"reverse", "ugly", "pretty", "this", "valid", "flatten", "join", "keys", "values", "tostr", "fromstr", "group", "dig"}

// CheckPath reports whether path is a well-formed GJSON path (see
// github.com/tidwall/gjson's SYNTAX.md): non-empty, no empty component,
// brackets and quotes closed, only GJSON's own @modifiers.
func CheckPath(path string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("path %q: %s", textutil.Truncate(path, 60), fmt.Sprintf(format, args...))
	}
	switch {
	case path == "":
		return errors.New("empty path; want a GJSON path such as structuredContent.id or content.0.text")
	case len(path) > maxPathLen:
		return bad("longer than %d characters", maxPathLen)
	}
	var stack []byte
	inStr, compStart := false, true
	for i := 0; i < len(path); i++ {
		c := path[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		if c < 0x20 || c == 0x7f {
			return bad("holds a control character")
		}
		switch c {
		case '\\':
			if i+1 == len(path) {
				return bad("ends with a lone backslash")
			}
			i++
		case '"':
			if len(stack) > 0 {
				inStr = true
			}
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return bad("%q at %d closes nothing", c, i+1)
			}
			stack = stack[:len(stack)-1]
		case '.', '|':
			if len(stack) == 0 {
				if compStart {
					return bad("empty component at %d (two separators in a row, or one at the start)", i+1)
				}
				compStart = true
				continue
			}
		case '@':
			if len(stack) == 0 && compStart {
				j := i + 1
				for j < len(path) && (path[j] >= 'a' && path[j] <= 'z' || path[j] >= 'A' && path[j] <= 'Z') {
					j++
				}
				if name := path[i+1 : j]; !slices.Contains(gjsonModifiers, name) {
					return bad("unknown modifier @%s; GJSON has @%s", textutil.Truncate(name, 20), strings.Join(gjsonModifiers, ", @"))
				}
				i = j - 1
			}
		}
		compStart = false
	}
	switch {
	case inStr:
		return bad("a string is not closed")
	case len(stack) > 0:
		return bad("%q is not closed", stack[len(stack)-1])
	case compStart:
		return bad("ends with a separator")
	}
	return nil
}

// CompiledCheck is a checked Check, ready to judge answers.
type CompiledCheck struct {
	Check
	// ID is the check's index in its scenario's CompiledScenario.Checks
	// (checks of the same name share it).
	ID   int
	re   *regexp.Regexp
	want any    // CheckEquals, CheckNotEquals: the value
	norm []byte // ... an object or list, as canonical JSON
}

func compileCheck(c Check) (*CompiledCheck, error) {
	if err := CheckPath(c.Path); err != nil {
		return nil, err
	}
	cc := &CompiledCheck{Check: c}
	if cc.Name == "" {
		cc.Name = c.String()
	}
	switch c.Op {
	case CheckExists, CheckMissing:
	case CheckEquals, CheckNotEquals:
		cc.want = c.Value
		switch c.Value.(type) {
		case map[string]any, []any:
			b, err := json.Marshal(c.Value)
			if err != nil {
				return nil, err
			}
			cc.norm = b
		}
	case CheckContains, CheckMatches:
		s, ok := c.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%s wants a text, got %v", c.Op, c.Value)
		}
		if c.Op == CheckMatches {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("matches %q: not a regular expression: %w", textutil.Truncate(s, 40), err)
			}
			cc.re = re
		}
	default:
		return nil, fmt.Errorf("unknown operator %q", textutil.Truncate(c.Op, 20))
	}
	return cc, nil
}

// Eval judges an answer (JSON; anything else finds nothing).
func (c *CompiledCheck) Eval(answer []byte) bool {
	r := gjson.GetBytes(answer, c.Path)
	switch c.Op {
	case CheckExists:
		return r.Exists()
	case CheckMissing:
		return !r.Exists()
	case CheckEquals:
		return c.equal(r)
	case CheckNotEquals:
		return !c.equal(r)
	case CheckContains:
		return r.Exists() && strings.Contains(r.String(), c.Value.(string))
	case CheckMatches:
		return r.Exists() && c.re.MatchString(r.String())
	}
	return false
}

func (c *CompiledCheck) equal(r gjson.Result) bool {
	if !r.Exists() {
		// isError is false when the result leaves it out.
		return c.Path == "isError" && c.want == false
	}
	switch w := c.want.(type) {
	case string:
		return r.Type == gjson.String && r.Str == w
	case int64:
		return r.Type == gjson.Number && r.Num == float64(w)
	case float64:
		return r.Type == gjson.Number && r.Num == w
	case bool:
		return (r.Type == gjson.True && w) || (r.Type == gjson.False && !w)
	case nil:
		return r.Type == gjson.Null
	}
	var got any
	if err := json.Unmarshal([]byte(r.Raw), &got); err != nil {
		return false
	}
	var want any
	_ = json.Unmarshal(c.norm, &want)
	return reflect.DeepEqual(got, want)
}

// CompiledCapture is a checked capture: what it finds goes to the user's
// variable Slot.
type CompiledCapture struct {
	Name, Path string
	Slot       int
}

// Find returns the raw JSON of what the capture's path finds in answer and
// its text (a string's value, else the JSON); ok is false if it finds
// nothing.
func (c *CompiledCapture) Find(answer []byte) (raw, text string, ok bool) {
	r := gjson.GetBytes(answer, c.Path)
	if !r.Exists() {
		return "", "", false
	}
	if r.Type == gjson.String {
		return r.Raw, r.Str, true
	}
	return r.Raw, r.Raw, true
}

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
