package scenariofile

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// captures reads capture: {NAME: PATH, ...}.
func (d *ydec) captures(n *yaml.Node, path string) []plan.Capture {
	fields, _ := d.mapping(n, path, nil)
	out := make([]plan.Capture, 0, len(fields))
	for _, f := range fields {
		out = append(out, plan.Capture{Name: f.raw, Path: d.str(f.v, path+"."+f.raw)})
	}
	return out
}

var checkKeys = []string{"path", "name", "equals", "notEquals", "contains", "matches", "exists", "isError"}

// checks reads check: a list of expressions ("PATH == VALUE", see
// ParseCheck) or mappings ({path: P, equals: V} | notEquals | contains |
// matches | exists: true|false, with an optional name; or {isError:
// false}); a single one needs no list.
func (d *ydec) checks(n *yaml.Node, path string) []plan.Check {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	items := []*yaml.Node{r}
	if r.Kind == yaml.SequenceNode {
		items = r.Content
	}
	var out []plan.Check
	for i, it := range items {
		ip := fmt.Sprintf("%s[%d]", path, i)
		it, ok := d.budgetLeft(it, ip)
		if !ok {
			continue
		}
		if it.Kind == yaml.ScalarNode {
			c, err := plan.ParseCheck(d.str(it, ip))
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
		var c plan.Check
		ops := 0
		for _, f := range fields {
			fp := ip + "." + f.key
			switch f.key {
			case "path":
				c.Path = d.str(f.v, fp)
			case "name":
				c.Name = d.str(f.v, fp)
			case "equals", "notEquals":
				c.Op, c.Value = map[string]string{"equals": plan.CheckEquals, "notEquals": plan.CheckNotEquals}[f.key], d.value(f.v, fp, 0)
				ops++
			case "contains", "matches":
				c.Op, c.Value = map[string]string{"contains": plan.CheckContains, "matches": plan.CheckMatches}[f.key], d.str(f.v, fp)
				ops++
			case "exists":
				c.Op = plan.CheckMissing
				if d.bool(f.v, fp) {
					c.Op = plan.CheckExists
				}
				ops++
			case "isError":
				if c.Path != "" {
					d.errf(f.k, fp, "isError is a check of its own; give it without path")
				}
				c.Path, c.Op, c.Value = "isError", plan.CheckEquals, d.bool(f.v, fp)
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
		if err := plan.CheckPath(c.Path); err != nil {
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

var dataKeys = []string{"file", "mode", "per"}

// dataSource reads data: users.csv | {file: users.csv, mode: unique,
// per: user}.
func (d *ydec) dataSource(n *yaml.Node, path string) *plan.DataSource {
	r, ok := d.budgetLeft(n, path)
	if !ok {
		return nil
	}
	ds := &plan.DataSource{}
	ds.SetLine(r.Line)
	if r.Kind == yaml.ScalarNode {
		ds.File = d.str(r, path)
		return ds
	}
	fields, _ := d.mapping(r, path, dataKeys)
	for _, f := range fields {
		switch f.key {
		case "file":
			ds.File = d.str(f.v, path+".file")
		case "mode":
			ds.Mode = d.str(f.v, path+".mode")
		case "per":
			ds.Per = d.str(f.v, path+".per")
		}
	}
	return ds
}
