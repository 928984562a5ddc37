package scenariofile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// ydec walks a YAML document into a Plan, recording each problem with its
// line.
type ydec struct {
	pe       *plan.Problems
	visits   int
	lines    map[string]int // the line of each key read, by path
	sections []Section      // the file's extra sections
	warns    []plan.Problem // keys in a deprecated spelling
}

// lineOf returns the line of path's key, or of the nearest key above it
// (0 if none was read).
func (d *ydec) lineOf(path string) int {
	for {
		if l, ok := d.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			return 0
		}
		path = path[:i]
	}
}

// kv is one entry of a mapping, its key normalized (see norm).
type kv struct {
	key, raw string
	k, v     *yaml.Node
}

// joinPath is path.key, or key at the top.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// norm makes option names match whatever their spelling: k6's camelCase,
// snake_case or kebab-case ("abortAfter", "abort_after", "abort-after").
// Only the table's own spelling is quiet: mapping warns of the others.
func norm(k string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
}

func (d *ydec) errf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.pe.Add(line, path, format, args...)
}

// resolve follows aliases, counting visits against the budget.
func (d *ydec) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
		d.visits++
	}
	d.visits++
	if d.visits > maxYAMLNodes {
		return nil
	}
	return n
}

func (d *ydec) budgetLeft(n *yaml.Node, path string) (*yaml.Node, bool) {
	r := d.resolve(n)
	if r == nil {
		if d.visits > maxYAMLNodes && d.visits < maxYAMLNodes+2 {
			d.errf(n, path, "document too large once aliases are expanded")
		}
		return nil, false
	}
	return r, true
}

// mapping returns the entries of a mapping node, reporting duplicate keys
// and keys not in allowed (normalized names -> canonical spelling).
func (d *ydec) mapping(n *yaml.Node, path string, allowed []string) ([]kv, bool) {
	n, ok := d.budgetLeft(n, path)
	if !ok {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.errf(n, path, "want a mapping (key: value), got %s", describe(n))
		return nil, false
	}
	var out []kv
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errf(k, path, "keys must be plain strings")
			continue
		}
		if k.Value == "<<" {
			d.errf(k, path, "YAML merge keys (<<) are not supported")
			continue
		}
		key := k.Value
		if allowed != nil {
			key = norm(k.Value)
			canon := ""
			for _, a := range allowed {
				if norm(a) == key {
					canon = a
				}
			}
			if canon == "" {
				d.errf(k, path, "unknown option %q; want one of %s", textutil.Truncate(k.Value, 40), strings.Join(allowed, ", "))
				continue
			}
			if k.Value != canon {
				// One spelling per key: the others still read, for the
				// files written when any spelling was the rule.
				d.warns = append(d.warns, plan.Problem{Line: k.Line, Path: joinPath(path, canon),
					Msg: fmt.Sprintf("%q is a deprecated spelling; write %s", textutil.Truncate(k.Value, 40), canon)})
			}
			key = canon
		}
		if seen[key] {
			d.errf(k, path, "%q given twice", textutil.Truncate(k.Value, 40))
			continue
		}
		seen[key] = true
		if path == "" {
			d.lines[key] = k.Line
		} else {
			d.lines[path+"."+key] = k.Line
		}
		out = append(out, kv{key: key, raw: k.Value, k: k, v: v})
	}
	return out, true
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing (null)"
		}
		return fmt.Sprintf("%q", textutil.Truncate(n.Value, 40))
	}
	return "something else"
}

func (d *ydec) scalar(n *yaml.Node, path string) (*yaml.Node, bool) {
	n, ok := d.budgetLeft(n, path)
	if !ok {
		return nil, false
	}
	if n.Kind != yaml.ScalarNode {
		d.errf(n, path, "want a single value, got %s", describe(n))
		return nil, false
	}
	return n, true
}

func (d *ydec) str(n *yaml.Node, path string) string {
	s, ok := d.scalar(n, path)
	if !ok {
		return ""
	}
	if s.ShortTag() == "!!null" {
		d.errf(s, path, "want a value, got nothing")
		return ""
	}
	return s.Value
}

func (d *ydec) int(n *yaml.Node, path string) int64 {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0
	}
	v, err := yamlInt(s.Value)
	if err != nil || s.ShortTag() != "!!int" {
		d.errf(s, path, "want a whole number, got %s", describe(s))
		return 0
	}
	return v
}

// smallInt reads an int that must fit a counter of users or a rate.
func (d *ydec) smallInt(n *yaml.Node, path string) int {
	v := d.int(n, path)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.errf(n, path, "%d is out of range", v)
		return 0
	}
	return int(v)
}

func (d *ydec) float(n *yaml.Node, path string) float64 {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(s.Value, 64)
	if err != nil || (s.ShortTag() != "!!int" && s.ShortTag() != "!!float") || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errf(s, path, "want a number, got %s", describe(s))
		return 0
	}
	return v
}

func (d *ydec) bool(n *yaml.Node, path string) bool {
	s, ok := d.scalar(n, path)
	if !ok {
		return false
	}
	if s.ShortTag() != "!!bool" {
		d.errf(s, path, "want true or false, got %s", describe(s))
		return false
	}
	return yamlTrue(s.Value)
}

// yamlTrue reads a scalar YAML resolved as !!bool.
func yamlTrue(v string) bool { return v == "true" || v == "True" || v == "TRUE" }

// yamlInt reads a scalar YAML resolved as !!int ("1_000", "0x1f", ...).
func yamlInt(v string) (int64, error) { return strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 0, 64) }

// duration reads a Go duration string ("1m30s", "500ms"); a bare 0 is
// also accepted.
func (d *ydec) duration(n *yaml.Node, path string) plan.Duration {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0
	}
	if s.Value == "0" {
		return 0
	}
	v, err := time.ParseDuration(s.Value)
	if err != nil {
		hint := ""
		if _, e := strconv.ParseFloat(s.Value, 64); e == nil {
			hint = ` (a unit is needed, e.g. "30s" or "500ms")`
		}
		d.errf(s, path, "bad duration %s%s", describe(s), hint)
		return 0
	}
	if v < 0 {
		d.errf(s, path, "duration must not be negative (got %s)", s.Value)
		return 0
	}
	return plan.Duration(v)
}

func (d *ydec) seq(n *yaml.Node, path string) []*yaml.Node {
	n, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errf(n, path, "want a list, got %s", describe(n))
		return nil
	}
	return n.Content
}
