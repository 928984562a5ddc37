package plan

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/internal/redact"
)

// captures reads capture: {NAME: PATH, ...}.
func (d *ydec) captures(n *yaml.Node, path string) []Capture {
	fields, _ := d.mapping(n, path, nil)
	out := make([]Capture, 0, len(fields))
	for _, f := range fields {
		out = append(out, Capture{Name: f.raw, Path: d.str(f.v, path+"."+f.raw)})
	}
	return out
}

var checkKeys = []string{"path", "name", "equals", "notEquals", "contains", "matches", "exists", "isError"}

// checks reads check: a list of expressions ("PATH == VALUE", see
// ParseCheck) or mappings ({path: P, equals: V} | notEquals | contains |
// matches | exists: true|false, with an optional name; or {isError:
// false}); a single one needs no list.
func (d *ydec) checks(n *yaml.Node, path string) []Check {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	items := []*yaml.Node{r}
	if r.Kind == yaml.SequenceNode {
		items = r.Content
	}
	var out []Check
	for i, it := range items {
		ip := fmt.Sprintf("%s[%d]", path, i)
		it, ok := d.budgetLeft(it, ip)
		if !ok {
			continue
		}
		if it.Kind == yaml.ScalarNode {
			c, err := ParseCheck(d.str(it, ip))
			if err != nil {
				d.errf(it, ip, "%v", err)
				continue
			}
			out = append(out, c)
			continue
		}
		fields, ok := d.mapping(it, ip, checkKeys)
		if !ok {
			continue
		}
		var c Check
		ops := 0
		for _, f := range fields {
			fp := ip + "." + f.key
			switch f.key {
			case "path":
				c.Path = d.str(f.v, fp)
			case "name":
				c.Name = d.str(f.v, fp)
			case "equals", "notEquals":
				c.Op, c.Value = map[string]string{"equals": CheckEquals, "notEquals": CheckNotEquals}[f.key], d.value(f.v, fp, 0)
				ops++
			case "contains", "matches":
				c.Op, c.Value = map[string]string{"contains": CheckContains, "matches": CheckMatches}[f.key], d.str(f.v, fp)
				ops++
			case "exists":
				c.Op = CheckMissing
				if d.bool(f.v, fp) {
					c.Op = CheckExists
				}
				ops++
			case "isError":
				if c.Path != "" {
					d.errf(f.k, fp, "isError is a check of its own; give it without path")
				}
				c.Path, c.Op, c.Value = "isError", CheckEquals, d.bool(f.v, fp)
				ops++
			}
		}
		switch {
		case ops != 1:
			d.errf(it, ip, "want exactly one of equals, notEquals, contains, matches, exists (with path), or isError")
			continue
		case c.Path == "":
			d.errf(it, ip, "missing path: a GJSON path into the answer, e.g. structuredContent.status")
			continue
		}
		if err := CheckPath(c.Path); err != nil {
			d.errf(it, ip+".path", "%v", err)
			continue
		}
		out = append(out, c)
	}
	return out
}

// statuses reads expectStatus: 200 | [200, 201].
func (d *ydec) statuses(n *yaml.Node, path string) []int {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	if r.Kind == yaml.SequenceNode {
		var out []int
		for _, c := range r.Content {
			out = append(out, d.smallInt(c, path))
		}
		if len(out) == 0 {
			d.errf(r, path, "empty; want a status or a list of them")
		}
		return out
	}
	return []int{d.smallInt(r, path)}
}

// dataSource reads data: users.csv | {file: users.csv, mode: unique}.
func (d *ydec) dataSource(n *yaml.Node, path string) *DataSource {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	ds := &DataSource{line: r.Line, recorded: d.pe.file == recordedPlan}
	if r.Kind == yaml.ScalarNode {
		ds.File = d.str(r, path)
		return ds
	}
	fields, _ := d.mapping(r, path, []string{"file", "mode"})
	for _, f := range fields {
		if f.key == "file" {
			ds.File = d.str(f.v, path+".file")
		} else {
			ds.Mode = d.str(f.v, path+".mode")
		}
	}
	return ds
}

// recordedPlan is the file name of a plan read back from a run directory
// (Plan.UnmarshalJSON): its data files are not read again.
const recordedPlan = "plan (JSON)"

// fields writes an http step's request as in a scenario file, secret-
// looking header values redacted.
func (h *HTTPRequest) fields() obj {
	method := h.Method
	if method == "" {
		method = "GET"
	}
	o := obj{{"method", method}, {"url", h.URL}}
	if h.Name != "" {
		o = append(o, field{"name", h.Name})
	}
	if len(h.Headers) > 0 {
		hs := make(map[string]string, len(h.Headers))
		for k, v := range h.Headers {
			if secretHeader(k) {
				v = redact.Mask
			}
			hs[k] = v
		}
		o = append(o, field{"headers", hs})
	}
	if h.Body != nil {
		o = append(o, field{"body", h.Body})
	}
	if len(h.ExpectStatus) > 0 {
		o = append(o, field{"expectStatus", h.ExpectStatus})
	}
	return o
}

// answerFields writes a step's captures and checks.
func answerFields(s Step) obj {
	var o obj
	if len(s.Captures) > 0 {
		c := obj{}
		for _, x := range s.Captures {
			c = append(c, field{x.Name, x.Path})
		}
		o = append(o, field{"capture", c})
	}
	if len(s.Checks) > 0 {
		var list []any
		for _, c := range s.Checks {
			var v any = c.String()
			if c.Name != "" && c.Name != c.String() {
				v = c.mapping()
			}
			list = append(list, v)
		}
		o = append(o, field{"check", list})
	}
	return o
}

// mapping writes a check as {path, OP: value, name}.
func (c Check) mapping() obj {
	o := obj{{"path", c.Path}}
	switch c.Op {
	case CheckEquals:
		o = append(o, field{"equals", c.Value})
	case CheckNotEquals:
		o = append(o, field{"notEquals", c.Value})
	case CheckContains:
		o = append(o, field{"contains", c.Value})
	case CheckMatches:
		o = append(o, field{"matches", c.Value})
	case CheckExists:
		o = append(o, field{"exists", true})
	case CheckMissing:
		o = append(o, field{"exists", false})
	}
	return append(o, field{"name", c.Name})
}
