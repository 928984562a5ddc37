package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/userdata"
)

// binder resolves {{vars.NAME}} and {{data.COLUMN}} while a flow is
// compiled: a variable must be captured by an earlier step (in the file's
// order), a column must be one of the data file's.
type binder struct {
	slots map[string]int  // variables captured so far, by name
	names []string        // by slot
	data  *userdata.Table // nil: no data file
	file  string          // the data file, for messages
	uses  []int           // slots the step being compiled uses

	target  string // the plan's target, which http steps' URLs are on
	lenient bool   // a recorded plan: its data file is not read
}

func (bd *binder) bindPart(p *tpart) error {
	switch p.fn {
	case fnVar:
		slot, ok := bd.slots[p.name]
		if !ok {
			if len(bd.names) == 0 {
				return fmt.Errorf("{{vars.%s}}: no earlier step captures %s (capture: {%s: PATH} on a step before this one)", p.name, p.name, p.name)
			}
			return fmt.Errorf("{{vars.%s}}: no earlier step captures %s; captured so far: %s", p.name, p.name, strings.Join(bd.names, ", "))
		}
		p.slot = slot
		if !slices.Contains(bd.uses, slot) {
			bd.uses = append(bd.uses, slot)
		}
	case fnData:
		if bd.data == nil && bd.lenient {
			return nil
		}
		if bd.data == nil {
			return fmt.Errorf("{{data.%s}}: the scenario has no data file (data: {file: users.csv})", textutil.Truncate(p.name, 40))
		}
		col, ok := bd.data.Column(p.name)
		if !ok {
			return fmt.Errorf("{{data.%s}}: %s has no column %q; its columns are %s", textutil.Truncate(p.name, 40), bd.file, textutil.Truncate(p.name, 40), strings.Join(bd.data.Columns, ", "))
		}
		p.slot = col
	}
	return nil
}

// bind resolves the variables and columns n refers to.
func (n *Template) bind(bd *binder) error {
	if n == nil {
		return nil
	}
	for i := range n.parts {
		if err := bd.bindPart(&n.parts[i]); err != nil {
			return err
		}
	}
	for _, c := range n.items {
		if err := c.bind(bd); err != nil {
			return err
		}
	}
	return nil
}

func (t *Text) bind(bd *binder) error { return t.n.bind(bd) }

// capture gives a captured variable its slot (the same for every step
// capturing that name).
func (bd *binder) capture(name string) int {
	if slot, ok := bd.slots[name]; ok {
		return slot
	}
	if bd.slots == nil {
		bd.slots = map[string]int{}
	}
	bd.slots[name] = len(bd.names)
	bd.names = append(bd.names, name)
	return len(bd.names) - 1
}

// newBinder resolves the scenario's data file (its own, else the plan's)
// and reads it, once for every copy of the plan.
func newBinder(pe *Problems, p *Plan, s *Scenario, cs *CompiledScenario, path string) *binder {
	bd := &binder{target: p.Target}
	ds, line, dp := s.Data, s.at("data"), path+".data"
	if ds == nil {
		ds, line, dp = p.Data, p.dataLine, "data"
	}
	if ds == nil {
		return bd
	}
	if ds.line > 0 {
		line = ds.line
	}
	cs.Data = ds
	switch ds.Mode {
	case "", DataSequential, DataRandom, DataUnique:
	default:
		pe.Add(line, dp+".mode", "unknown mode %q; want %s, %s or %s", textutil.Truncate(ds.Mode, 30), DataSequential, DataRandom, DataUnique)
	}
	switch ds.Per {
	case "", DataPerUser:
	case DataPerIteration:
		if ds.Mode == DataUnique {
			pe.Add(line, dp+".per", "unique gives each user its own row for its life; per: iteration needs mode sequential or random")
		}
	default:
		pe.Add(line, dp+".per", "unknown %q; want %s (one row for the user's life, the default) or %s (a fresh row every iteration)", textutil.Truncate(ds.Per, 30), DataPerUser, DataPerIteration)
	}
	if p.file == RecordedFile { // read back from a run directory
		bd.lenient = true
		return bd
	}
	if strings.TrimSpace(ds.File) == "" {
		pe.Add(line, dp+".file", "missing; want a CSV file with a header line or a JSON array of objects")
		return bd
	}
	if ds.dir == "" && p.file != "" {
		ds.dir = filepath.Dir(p.file)
	}
	tbl, err := ds.Table()
	if err != nil {
		pe.Add(line, dp+".file", "%v", err)
		return bd
	}
	if ds.Mode == DataUnique && cs.Users > tbl.Rows() {
		pe.Add(line, dp+".mode", "unique: the scenario may run %d users at once but %s has %d rows; give more rows or use sequential (rows are reused) or random", cs.Users, ds.File, tbl.Rows())
	}
	cs.DataTable, bd.data, bd.file = tbl, tbl, ds.File
	return bd
}

// compileStepExtras binds a request step's templates to the user's
// variables and data row, compiles an http step's request, and its
// captures and checks.
func compileStepExtras(pe *Problems, cs *CompiledScenario, st *Step, c *CompiledStep, sp string) {
	bd := cs.bind
	if bd == nil {
		bd = &binder{}
		cs.bind = bd
	}
	bd.uses = nil
	for _, x := range []struct {
		key string
		err error
	}{{"name", c.Name.bind(bd)}, {"uri", c.URI.bind(bd)}, {"arguments", c.Args.bind(bd)}} {
		if x.err != nil {
			pe.Add(st.line, sp+"."+x.key, "%v", x.err)
		}
	}
	if st.Kind == StepHTTP {
		if st.HTTP == nil {
			pe.Add(st.line, sp, "needs a request, e.g. - http: {method: GET, url: /api/health}")
		} else {
			c.HTTP = compileHTTP(pe, bd.target, st, bd, sp)
		}
	}
	c.Uses = bd.uses
	compileAnswerRules(pe, cs, st, c, bd, sp)
}
