package scenariofile

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// ReadRecorded reads back a plan a run directory recorded (plan.Plan's
// JSON, the scenario file's shape: JSON being YAML, Parse reads it). Its
// data files are not read again: the plan holds what they gave.
func ReadRecorded(raw []byte) (*plan.Plan, error) {
	// No interpolation: what the run recorded is what it played.
	p, _, err := parse(raw, plan.RecordedFile, Options{NoInterpolation: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("read recorded plan: %w", err)
	}
	return p, nil
}

// ReadPlayable reads a plan its parent sent a worker process to play
// (package workers): JSON as ReadRecorded reads it, with no
// interpolation, but its data files are read — the parent made their
// paths absolute — so that its users get their rows.
func ReadPlayable(raw []byte) (*plan.Plan, error) {
	p, _, err := parse(raw, plan.PlayableFile, Options{NoInterpolation: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("read the plan to play: %w", err)
	}
	return p, nil
}

// Bounds on a scenario file, so that a hostile one cannot exhaust memory.
const (
	maxPlanBytes   = 1 << 20
	maxYAMLNodes   = 200_000 // visits, aliases expanded
	maxTokensBytes = 16 << 20
)

// k6's defaults, filled in by Parse.
const (
	defaultGracefulStop     = 30 * time.Second
	defaultGracefulRampDown = 30 * time.Second
	defaultMaxDuration      = 10 * time.Minute
	defaultTimeUnit         = time.Second
)

// Load reads and checks a YAML scenario file, and decodes its extra
// sections, if any, as Parse does. Tokens named by its tokensFile are
// read too, relative to the file's directory. Errors name the file, the
// line and what is wrong, and match plan.ErrInvalidPlan. ${KEY} and
// ${KEY:-default} take the environment's values (LoadWith adds the
// command line's).
func Load(path string, sections ...Section) (*plan.Plan, error) {
	return LoadWith(path, Options{}, sections...)
}

// LoadWith is Load with the command line's variables (-e) and the
// environment to fill ${KEY}; a ${KEY} neither gives, with no default, is
// an error naming the file and the line, as is one ${KEY} given two
// different defaults.
func LoadWith(path string, o Options, sections ...Section) (*plan.Plan, error) {
	data, err := readBounded(path, maxPlanBytes)
	if err != nil {
		return nil, fmt.Errorf("read scenario file: %w", err)
	}
	p, d, err := parse(data, path, o, sections)
	if err != nil {
		return nil, err
	}
	if p.TokensFile != "" && len(p.Tokens) == 0 {
		tf := p.TokensFile
		if !filepath.IsAbs(tf) {
			tf = filepath.Join(filepath.Dir(path), tf)
		}
		toks, err := ReadTokens(tf)
		if err != nil {
			pe := &plan.Problems{File: path}
			pe.Add(d.lines["tokensFile"], "tokensFile", "%v", err)
			return nil, pe
		}
		p.Tokens = toks
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Parse parses and checks a YAML (or JSON) scenario; filename is used in
// error messages only. Missing options get k6's defaults. The file may
// hold the given extra sections besides the plan's own keys; each present
// is decoded into its Into by the same rules, its problems reported with
// the plan's, and an absent one leaves its Into as it was.
func Parse(data []byte, filename string, sections ...Section) (*plan.Plan, error) {
	return ParseWith(data, filename, Options{}, sections...)
}

// ParseWith is Parse with the variables of o (see LoadWith).
func ParseWith(data []byte, filename string, o Options, sections ...Section) (*plan.Plan, error) {
	p, _, err := parse(data, filename, o, sections)
	return p, err
}

// parse is Parse, returning the decoder too (its lines, for Load).
func parse(data []byte, filename string, o Options, sections []Section) (*plan.Plan, *ydec, error) {
	pe := &plan.Problems{File: filename}
	if len(data) > maxPlanBytes {
		pe.Add(0, "", "larger than %d bytes", maxPlanBytes)
		return nil, nil, pe
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlErr(err)
		pe.Add(line, "", "not valid YAML: %s", msg)
		return nil, nil, pe
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		pe.Add(0, "", "empty; want a scenario file with scenarios:")
		return nil, nil, pe
	}
	d := &ydec{pe: pe, lines: map[string]int{}, sections: sections}
	d.interpolate(&doc, o)
	if len(pe.List) > 0 {
		return nil, nil, pe // a value missing: the rest would only repeat it
	}
	// protocolVersion's default is auto, as the SDK clients' is: the
	// users speak what the server offers.
	p := &plan.Plan{Timeout: plan.Duration(mcp.DefaultRequestTimeout), ProtocolVersion: plan.AutoVersion}
	d.plan(doc.Content[0], p)
	p.SetSource(filename, d.lines["tokensFile"], d.lines["data"])
	for _, w := range d.warns {
		p.AddWarning(w.Line, w.Path, w.Msg)
	}
	_, err := plan.Compile(p)
	if err == nil && len(pe.List) == 0 {
		return p, d, nil
	}
	// Report every problem at once: the file's, then the plan's that are
	// not about something the file's already named (a bad duration read
	// as 0 need not be reported twice).
	var ce *plan.Problems
	if errors.As(err, &ce) {
		walked := slices.Clone(pe.List)
		for _, q := range ce.List {
			if !slices.ContainsFunc(walked, func(w plan.Problem) bool { return within(q.Path, w.Path) || within(w.Path, q.Path) }) {
				line := q.Line
				if line == 0 {
					line = d.lineOf(q.Path) // e.g. a plan-wide option
				}
				pe.Add(line, q.Path, "%s", q.Msg)
			}
		}
	}
	slices.SortStableFunc(pe.List, func(a, b plan.Problem) int {
		if a.Line == 0 || b.Line == 0 {
			return b.Line - a.Line // problems without a line last
		}
		return a.Line - b.Line
	})
	return nil, nil, pe
}

// within reports whether path is base or inside it.
func within(path, base string) bool {
	return path == base || (base != "" && (strings.HasPrefix(path, base+".") || strings.HasPrefix(path, base+"[")))
}

// yamlErr splits a yaml error ("yaml: line 3: did not find ...") into the
// line and the message.
func yamlErr(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, err2 := strconv.Atoi(num)
	if !ok || err2 != nil {
		return 0, msg
	}
	return n, text
}

var planKeys = []string{"target", "timeout", "protocolVersion", "headers", "tokens", "tokensFile", "seed", "connections", "data", "scenarios", "thresholds"}

func (d *ydec) plan(n *yaml.Node, p *plan.Plan) {
	keys := planKeys
	for _, sec := range d.sections {
		keys = append(keys[:len(keys):len(keys)], sec.Key)
	}
	entries, ok := d.mapping(n, "", keys)
	if !ok {
		return
	}
	hasScenarios := false
	for _, e := range entries {
		switch e.key {
		case "target":
			p.Target = d.str(e.v, e.key)
		case "timeout":
			p.Timeout = d.duration(e.v, e.key)
		case "protocolVersion":
			p.ProtocolVersion = d.version(e.v, e.key)
		case "headers":
			hs, _ := d.mapping(e.v, e.key, nil)
			p.Headers = map[string]string{}
			for _, h := range hs {
				p.Headers[h.raw] = d.str(h.v, "headers."+h.raw)
			}
		case "tokens":
			for _, t := range d.seq(e.v, e.key) {
				p.Tokens = append(p.Tokens, d.str(t, e.key))
			}
		case "tokensFile":
			p.TokensFile = d.str(e.v, e.key)
		case "seed":
			p.Seed = d.int(e.v, e.key)
		case "connections":
			d.connections(e.v, p)
		case "scenarios":
			hasScenarios = true
			scens, _ := d.mapping(e.v, e.key, nil)
			for _, s := range scens {
				p.Scenarios = append(p.Scenarios, d.scenario(s))
			}
		case "data":
			p.Data = d.dataSource(e.v, e.key)
		case "thresholds":
			d.thresholds(e.v, p)
		default:
			d.section(e)
		}
	}
	if !hasScenarios {
		d.errf(n, "", "no scenarios: section; want at least one scenario")
	}
	if p.TokensFile != "" && len(p.Tokens) > 0 {
		d.errf(n, "", "give tokens or tokensFile, not both")
	}
}

var commonScenarioKeys = []string{"executor", "startTime", "gracefulStop", "timeout", "protocolVersion", "cache", "listen", "flow", "data"}

func (d *ydec) scenario(e kv) plan.Scenario {
	path := "scenarios." + e.raw
	s := plan.Scenario{Name: e.raw, GracefulStop: plan.Duration(defaultGracefulStop)}
	s.SetLine(e.k.Line)
	// The executor decides which options are allowed: find it first.
	entries, ok := d.mapping(e.v, path, nil)
	if !ok {
		return s
	}
	for _, o := range entries {
		if norm(o.raw) == "executor" {
			s.Executor = d.str(o.v, path+".executor")
		}
	}
	allowed, known := plan.ExecutorOptions[s.Executor]
	switch {
	case s.Executor == "":
		d.errf(e.v, path, "no executor; want one of %s", strings.Join(plan.Executors, ", "))
		return s
	case !known:
		d.errf(e.v, path+".executor", "unknown executor %q; want one of %s", textutil.Truncate(s.Executor, 40), strings.Join(plan.Executors, ", "))
		return s
	}
	switch s.Executor {
	case plan.ExecConstantVUs, plan.ExecPerVUIterations, plan.ExecExternallyControlled:
		s.VUs = 1
	case plan.ExecRampingVUs:
		s.StartVUs, s.GracefulRampDown = 1, plan.Duration(defaultGracefulRampDown)
	}
	if s.Executor == plan.ExecPerVUIterations {
		s.Iterations, s.MaxDuration = 1, plan.Duration(defaultMaxDuration)
	}
	if s.Executor == plan.ExecConstantArrivalRate || s.Executor == plan.ExecRampingArrivalRate {
		s.TimeUnit = plan.Duration(defaultTimeUnit)
	}
	entries, _ = d.mapping(e.v, path, append(slices.Clone(commonScenarioKeys), allowed...))
	maxVUsSet := false
	for _, o := range entries {
		op := path + "." + o.key
		s.SetOptionLine(o.key, o.k.Line)
		switch f := s.Option(o.key).(type) {
		case *plan.Duration:
			*f = d.duration(o.v, op)
		case *int:
			*f = d.smallInt(o.v, op)
		case *int64:
			*f = d.int(o.v, op)
		case *string:
			if o.key == "protocolVersion" {
				*f = d.version(o.v, op)
				break
			}
			*f = d.str(o.v, op)
		case *bool:
			*f = d.bool(o.v, op)
		case *[]plan.Step:
			*f = d.steps(o.v, op)
		case **plan.DataSource:
			*f = d.dataSource(o.v, op)
		case *[]plan.Stage:
			*f = d.stages(o.v, op)
		}
		maxVUsSet = maxVUsSet || o.key == "maxVUs"
	}
	switch {
	case maxVUsSet:
	case s.Executor == plan.ExecExternallyControlled:
		s.MaxVUs = s.VUs // k6: maxVUs defaults to vus
	default:
		s.MaxVUs = s.PreAllocatedVUs // k6: maxVUs defaults to preAllocatedVUs
	}
	return s
}

// version reads a protocolVersion setting. An empty one is refused: in
// a Plan "" means the plan's setting (a scenario) or negotiate, which a
// file that wrote protocolVersion: "" is unlikely to have meant; plan
// checks the rest.
func (d *ydec) version(n *yaml.Node, path string) string {
	v := d.str(n, path)
	if v == "" && n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
		d.errf(n, path, "empty; want %s (the default), %s, %s or a 2025 revision (%s)",
			plan.AutoVersion, plan.NegotiateVersion, mcp.Version20260728, strings.Join(mcp.SupportedVersions, ", "))
	}
	return v
}

// stages reads [{duration: D, target: N}, ...].
func (d *ydec) stages(n *yaml.Node, path string) []plan.Stage {
	var out []plan.Stage
	for i, sn := range d.seq(n, path) {
		sp := fmt.Sprintf("%s[%d]", path, i)
		var st plan.Stage
		st.SetLine(sn.Line)
		fields, ok := d.mapping(sn, sp, stageKeys)
		for _, f := range fields {
			if f.key == "duration" {
				st.Duration = d.duration(f.v, sp+".duration")
			} else {
				st.Target = d.smallInt(f.v, sp+".target")
			}
		}
		if ok && len(fields) != 2 {
			d.errf(sn, sp, "a stage needs both duration and target")
		}
		out = append(out, st)
	}
	return out
}

func (d *ydec) thresholds(n *yaml.Node, p *plan.Plan) {
	entries, _ := d.mapping(n, "thresholds", nil)
	for _, e := range entries {
		path := "thresholds." + e.raw
		items := []*yaml.Node{e.v}
		if r, ok := d.budgetLeft(e.v, path); ok && r.Kind == yaml.SequenceNode {
			items = r.Content
		}
		if len(items) == 0 {
			d.errf(e.v, path, "no threshold expressions")
		}
		for _, it := range items {
			t := plan.Threshold{Metric: e.raw}
			t.SetLine(it.Line)
			r, ok := d.budgetLeft(it, path)
			if !ok {
				continue
			}
			if r.Kind == yaml.MappingNode {
				fields, _ := d.mapping(r, path, thresholdKeys)
				for _, f := range fields {
					switch f.key {
					case "threshold":
						t.Expression = d.str(f.v, path+".threshold")
					case "abortOnFail":
						t.AbortOnFail = d.bool(f.v, path+".abortOnFail")
					case "delayAbortEval":
						t.DelayAbortEval = d.duration(f.v, path+".delayAbortEval")
					}
				}
				if t.Expression == "" {
					d.errf(r, path, "missing threshold: expression, e.g. \"p(95)<500\"")
				}
			} else {
				t.Expression = d.str(r, path)
			}
			p.Thresholds = append(p.Thresholds, t)
		}
	}
}

// connections decodes the plan's connections: option.
func (d *ydec) connections(n *yaml.Node, p *plan.Plan) {
	const path = "connections"
	r := d.resolve(n)
	if r != nil && r.Kind == yaml.ScalarNode {
		if v := d.str(r, path); v != "" && norm(v) != norm(plan.ConnectionsPerUser) {
			d.errf(r, path, "want %s or {shared: N}, got %s", plan.ConnectionsPerUser, describe(r))
		} else if v != plan.ConnectionsPerUser {
			d.warns = append(d.warns, plan.Problem{Line: r.Line, Path: path,
				Msg: fmt.Sprintf("%q is a deprecated spelling; write %s", v, plan.ConnectionsPerUser)})
		}
		p.SharedConnections = 0
		return
	}
	entries, ok := d.mapping(n, path, connectionsKeys)
	if !ok {
		return
	}
	for _, e := range entries {
		v := d.smallInt(e.v, path+"."+plan.ConnectionsShared)
		if v < 1 || v > plan.MaxSharedConnections {
			d.errf(e.v, path+"."+plan.ConnectionsShared, "want a number of connections in [1, %d], got %d", plan.MaxSharedConnections, v)
			continue
		}
		p.SharedConnections = v
	}
}
