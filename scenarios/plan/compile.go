package plan

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/internal/textutil"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

var scenarioName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Compile checks p and compiles it into the form the engine plays: every
// problem is reported at once, each naming where it is (file and line when
// p came from a file), and the error matches ErrInvalidPlan.
func Compile(p *Plan) (*Compiled, error) {
	pe := &Problems{File: p.file}
	cp := &Compiled{Plan: p}
	if p.Target != "" {
		if err := checkURL(p.Target); err != nil {
			pe.Add(0, "target", "%v", err)
		}
	}
	if p.Timeout <= 0 || p.Timeout.D() > MaxRequestTimeout {
		pe.Add(0, "timeout", "must be in (0, %s] (got %s)", MaxRequestTimeout, p.Timeout)
	}
	checkVersion(pe, 0, "protocolVersion", p.ProtocolVersion)
	checkHeaders(pe, p.Headers)
	if p.SharedConnections < 0 || p.SharedConnections > MaxSharedConnections {
		pe.Add(0, "connections", "shared: want a number of connections in [1, %d], got %d", MaxSharedConnections, p.SharedConnections)
	}
	for i, tok := range p.Tokens {
		// Never print the token itself.
		if tok == "" {
			pe.Add(p.tokensLine, "tokens", "token %d is empty", i+1)
		} else if BadToken(tok) {
			pe.Add(p.tokensLine, "tokens", "token %d contains whitespace or control characters", i+1)
		}
	}
	switch {
	case len(p.Scenarios) == 0:
		pe.Add(0, "scenarios", "none given; want at least one")
	case len(p.Scenarios) > maxScenarios:
		pe.Add(0, "scenarios", "%d given; at most %d", len(p.Scenarios), maxScenarios)
	}
	var names []string
	users := 0
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		path := "scenarios." + s.Name
		switch {
		case !scenarioName.MatchString(s.Name):
			pe.Add(s.line, fmt.Sprintf("scenarios[%d]", i), "name %q must be 1-64 letters, digits, '_', '-' or '.'", textutil.Truncate(s.Name, 70))
		case slices.Contains(names, s.Name):
			pe.Add(s.line, path, "scenario name used twice")
		}
		names = append(names, s.Name)
		cs := compileScenario(pe, p, s, path)
		cs.Index = i
		users += cs.Users
		cp.Scenarios = append(cp.Scenarios, cs)
	}
	if users > MaxUsers {
		pe.Add(0, "scenarios", "together up to %d users; at most %d", users, MaxUsers)
	}
	for _, t := range p.Thresholds {
		ct, err := compileThreshold(t, names)
		if err != nil {
			pe.Add(t.line, "thresholds."+t.Metric, "%v", err)
			continue
		}
		cp.Thresholds = append(cp.Thresholds, ct)
	}
	return cp, pe.err()
}

// compileThreshold checks t against the plan's scenario names. The
// metric's catalogue and k6's expression syntax are package threshold's;
// what a tag's value must name (a scenario, a method) is the plan's.
func compileThreshold(t Threshold, scenarioNames []string) (*CompiledThreshold, error) {
	name, filter, err := threshold.ParseMetricKey(t.Metric)
	if err != nil {
		return nil, err
	}
	for _, f := range filter {
		switch f.Name {
		case "scenario":
			if !slices.Contains(scenarioNames, f.Value) {
				return nil, fmt.Errorf("metric %q: no scenario named %q", t.Metric, textutil.Truncate(f.Value, 40))
			}
		case "method":
			if strings.HasPrefix(name, "http_") {
				if strings.IndexFunc(f.Value, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
					return nil, fmt.Errorf("metric %q: %q is not an HTTP method (GET, POST, ...)", t.Metric, textutil.Truncate(f.Value, 40))
				}
			} else if !slices.Contains(Methods, f.Value) {
				return nil, fmt.Errorf("metric %q: unknown method %q; want one of %s", t.Metric, textutil.Truncate(f.Value, 40), strings.Join(Methods, ", "))
			}
		case "status":
			if n, err := strconv.Atoi(f.Value); err != nil || n < 0 || n > 599 {
				return nil, fmt.Errorf("metric %q: status %q is not an HTTP status (0: no answer)", t.Metric, textutil.Truncate(f.Value, 40))
			}
		case "kind":
			if !slices.Contains(mcp.Kinds, f.Value) {
				return nil, fmt.Errorf("metric %q: unknown error kind %q; want one of %s", t.Metric, textutil.Truncate(f.Value, 40), strings.Join(mcp.Kinds, ", "))
			}
		}
	}
	x, err := threshold.ParseExpression(t.Expression)
	if err != nil {
		return nil, err
	}
	if err := threshold.CheckAggregation(name, x); err != nil {
		return nil, fmt.Errorf("threshold %q on %s: %w", t.Expression, name, err)
	}
	if t.DelayAbortEval < 0 {
		return nil, fmt.Errorf("delayAbortEval must be >= 0 (got %s)", t.DelayAbortEval)
	}
	return &CompiledThreshold{Threshold: t, Name: name, Filter: filter, Expr: x}, nil
}

// checkVersion checks a protocolVersion setting: auto, negotiate, or a
// version the client can pin (2026-07-28 or a 2025 revision).
func checkVersion(pe *Problems, line int, path, v string) {
	if v == NegotiateVersion || mcp.ValidVersionSetting(v) {
		return // also "": the plan's (a scenario), negotiate (a Plan built in Go)
	}
	pe.Add(line, path, "%q is not a version this client speaks; want %s (the default: the server's newest era), %s (the 2025 handshake, any 2025 version), %s, or a 2025 revision pinned: %s",
		textutil.Truncate(v, 30), AutoVersion, NegotiateVersion, mcp.Version20260728, strings.Join(mcp.SupportedVersions, ", "))
}

// reservedHeaders are set by the client itself.
var reservedHeaders = []string{"Accept", "Content-Type", "Content-Length", "Host", "Connection",
	"Transfer-Encoding", "Mcp-Session-Id", "Mcp-Protocol-Version", "User-Agent", "Authorization"}

func checkHeaders(pe *Problems, h map[string]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		path := "headers." + textutil.Truncate(k, 40)
		switch {
		case k == "" || strings.IndexFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) }) >= 0:
			pe.Add(0, path, "not a valid header name")
		case slices.ContainsFunc(reservedHeaders, func(r string) bool { return strings.EqualFold(r, k) }):
			if strings.EqualFold(k, "Authorization") {
				pe.Add(0, path, "bearer tokens go in tokens or tokensFile, which are kept out of every output")
			} else {
				pe.Add(0, path, "set by the client itself; it cannot be replaced")
			}
		case strings.ContainsAny(h[k], "\r\n\x00"):
			pe.Add(0, path, "value contains a line break or NUL")
		}
	}
}

// BadToken reports whether a bearer token holds whitespace or control
// characters, which cannot go into a header line.
func BadToken(tok string) bool {
	return strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
}

// checkURL checks that target is an http(s) URL with a host; whether the
// host may be loaded is checked when the run starts.
func checkURL(target string) error {
	u, err := url.Parse(target)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https", redact.URL(target))
	case u.User != nil:
		return fmt.Errorf("%q must not contain credentials; give the scenario its tokens (tokens: or tokensFile:) instead", redact.URL(target))
	case u.Hostname() == "":
		return fmt.Errorf("%q has no host", redact.URL(target))
	}
	return nil
}

func durIn(pe *Problems, line int, path string, d Duration, lo, hi time.Duration, loOpen bool) {
	if d.D() < lo || d.D() > hi || (loOpen && d.D() == lo) {
		open := "["
		if loOpen {
			open = "("
		}
		pe.Add(line, path, "must be in %s%s, %s] (got %s)", open, lo, hi, d)
	}
}

func intIn(pe *Problems, line int, path string, v, lo, hi int64) {
	if v < lo || v > hi {
		pe.Add(line, path, "must be in [%d, %d] (got %d)", lo, hi, v)
	}
}

// compileScenario checks one scenario and compiles its flow.
func compileScenario(pe *Problems, p *Plan, s *Scenario, path string) *CompiledScenario {
	cs := &CompiledScenario{Scenario: s, RequestTimeout: p.Timeout.D(), Pin: p.ProtocolVersion}
	if s.Timeout != 0 {
		durIn(pe, s.at("timeout"), path+".timeout", s.Timeout, 0, MaxRequestTimeout, true)
		cs.RequestTimeout = s.Timeout.D()
	}
	if s.ProtocolVersion != "" {
		checkVersion(pe, s.at("protocolVersion"), path+".protocolVersion", s.ProtocolVersion)
		cs.Pin = s.ProtocolVersion
	}
	if cs.Pin == NegotiateVersion {
		cs.Pin = ""
	}
	if s.Cache != "" && s.Cache != CacheHonor && s.Cache != CacheIgnore {
		pe.Add(s.at("cache"), path+".cache", "unknown setting %q; want %s (the default: serve fresh ttlMs results from the user's cache) or %s (send every request)",
			textutil.Truncate(s.Cache, 40), CacheHonor, CacheIgnore)
	}
	durIn(pe, s.at("startTime"), path+".startTime", s.StartTime, 0, MaxDuration, false)
	durIn(pe, s.at("gracefulStop"), path+".gracefulStop", s.GracefulStop, 0, MaxDuration, false)
	l := s.line
	switch s.Executor {
	case ExecConstantVUs:
		intIn(pe, s.at("vus"), path+".vus", int64(s.VUs), 1, MaxUsers)
		durIn(pe, s.at("duration"), path+".duration", s.Duration, 0, MaxDuration, true)
		cs.Users, cs.Length = s.VUs, s.Duration.D()
	case ExecPerVUIterations:
		intIn(pe, s.at("vus"), path+".vus", int64(s.VUs), 1, MaxUsers)
		intIn(pe, s.at("iterations"), path+".iterations", s.Iterations, 1, maxIterations)
		durIn(pe, s.at("maxDuration"), path+".maxDuration", s.MaxDuration, 0, MaxDuration, true)
		cs.Users, cs.Length = s.VUs, s.MaxDuration.D()
	case ExecRampingVUs:
		intIn(pe, s.at("startVUs"), path+".startVUs", int64(s.StartVUs), 0, MaxUsers)
		durIn(pe, s.at("gracefulRampDown"), path+".gracefulRampDown", s.GracefulRampDown, 0, MaxDuration, false)
		peak, total := checkStages(pe, s, path, MaxUsers)
		cs.Users, cs.Length = max(peak, s.StartVUs), total
		if cs.Users == 0 && total > 0 {
			pe.Add(s.at("stages"), path+".stages", "startVUs and every target are 0: no user would ever run")
		}
	case ExecConstantArrivalRate, ExecRampingArrivalRate:
		durIn(pe, s.at("timeUnit"), path+".timeUnit", s.TimeUnit, 0, MaxDuration, true)
		maxRate := int64(maxRatePerSecond)
		if s.TimeUnit > 0 {
			maxRate = int64(float64(maxRatePerSecond) * s.TimeUnit.D().Seconds())
			maxRate = max(maxRate, 1)
		}
		if s.Executor == ExecConstantArrivalRate {
			intIn(pe, s.at("rate"), path+".rate", int64(s.Rate), 1, maxRate)
			durIn(pe, s.at("duration"), path+".duration", s.Duration, 0, MaxDuration, true)
			cs.Length = s.Duration.D()
		} else {
			intIn(pe, s.at("startRate"), path+".startRate", int64(s.StartRate), 0, maxRate)
			peak, total := checkStages(pe, s, path, maxRate)
			cs.Length = total
			if max(peak, s.StartRate) == 0 && total > 0 {
				pe.Add(s.at("stages"), path+".stages", "startRate and every target are 0: no iteration would ever start")
			}
		}
		intIn(pe, s.at("preAllocatedVUs"), path+".preAllocatedVUs", int64(s.PreAllocatedVUs), 0, MaxUsers)
		intIn(pe, s.at("maxVUs"), path+".maxVUs", int64(s.MaxVUs), 1, MaxUsers)
		if s.MaxVUs > 0 && s.PreAllocatedVUs > s.MaxVUs {
			pe.Add(s.at("preAllocatedVUs"), path+".preAllocatedVUs", "%d is more than maxVUs (%d)", s.PreAllocatedVUs, s.MaxVUs)
		}
		cs.Users = max(s.MaxVUs, s.PreAllocatedVUs)
	case ExecExternallyControlled:
		intIn(pe, s.at("vus"), path+".vus", int64(s.VUs), 0, MaxUsers)
		intIn(pe, s.at("maxVUs"), path+".maxVUs", int64(s.MaxVUs), 1, MaxUsers)
		durIn(pe, s.at("duration"), path+".duration", s.Duration, 0, MaxDuration, true)
		if s.VUs > s.MaxVUs && s.MaxVUs > 0 {
			pe.Add(s.at("vus"), path+".vus", "%d is more than maxVUs (%d)", s.VUs, s.MaxVUs)
		}
		cs.Users, cs.Length = s.MaxVUs, s.Duration.D()
	default:
		pe.Add(s.at("executor"), path+".executor", "unknown executor %q; want one of %s", textutil.Truncate(s.Executor, 40), strings.Join(Executors, ", "))
	}
	if s.StartTime.D()+cs.Length > MaxDuration {
		pe.Add(l, path, "startTime plus duration is more than %s", MaxDuration)
	}
	if len(s.Flow) == 0 {
		pe.Add(s.at("flow"), path+".flow", "empty; want at least one step")
		return cs
	}
	count := 0
	cs.bind = newBinder(pe, p, s, cs, path)
	cs.Flow = compileSteps(pe, cs, s.Flow, path+".flow", 0, &count)
	cs.StartsWithInit = len(cs.Flow) > 0 && cs.Flow[0].Kind == OpInitialize
	if s.Executor != ExecConstantArrivalRate && s.Executor != ExecRampingArrivalRate && len(cs.Flow) == len(s.Flow) && !progresses(cs.Flow) {
		pe.Add(s.at("flow"), path+".flow", "a pass through it may neither send a request nor think: the users would spin; add a request or a think step")
	}
	return cs
}

// Executors lists the executors, as k6 and a scenario file name them.
var Executors = []string{ExecConstantVUs, ExecRampingVUs, ExecPerVUIterations, ExecConstantArrivalRate, ExecRampingArrivalRate, ExecExternallyControlled}

// checkStages checks a ramping executor's stages; it returns the highest
// target and the total duration.
func checkStages(pe *Problems, s *Scenario, path string, maxTarget int64) (int, time.Duration) {
	if len(s.Stages) == 0 || len(s.Stages) > maxStages {
		pe.Add(s.at("stages"), path+".stages", "want 1 to %d stages (got %d)", maxStages, len(s.Stages))
		return 0, 0
	}
	peak, total := 0, time.Duration(0)
	for i, st := range s.Stages {
		sp := fmt.Sprintf("%s.stages[%d]", path, i)
		durIn(pe, st.line, sp+".duration", st.Duration, 0, MaxDuration, false)
		intIn(pe, st.line, sp+".target", int64(st.Target), 0, maxTarget)
		peak = max(peak, st.Target)
		total += max(st.Duration.D(), 0)
	}
	if total <= 0 {
		pe.Add(s.at("stages"), path+".stages", "every stage lasts 0s: the scenario would end before it starts")
	} else if total > MaxDuration {
		pe.Add(s.at("stages"), path+".stages", "together last %s; at most %s", total, MaxDuration)
	}
	return peak, total
}

// compileSteps checks and compiles a list of steps.
func compileSteps(pe *Problems, cs *CompiledScenario, steps []Step, path string, depth int, count *int) []CompiledStep {
	var out []CompiledStep
	for i := range steps {
		st := &steps[i]
		sp := fmt.Sprintf("%s[%d].%s", path, i, st.Kind)
		*count++
		if *count > maxSteps {
			pe.Add(st.line, path, "more than %d steps", maxSteps)
			return out
		}
		c := CompiledStep{Kind: st.Kind, Timeout: st.Timeout.D(), AbortAfter: st.AbortAfter.D()}
		isReq := st.Kind != OpDelete && slices.Contains(StepMethods, st.Kind) || st.Kind == StepHTTP
		unexpected := func(what string, set bool) {
			if set {
				pe.Add(st.line, sp, "%s is not an option of %s", what, st.Kind)
			}
		}
		unexpected("name", st.Name != "" && st.Kind != OpCallTool && st.Kind != OpGetPrompt)
		unexpected("uri", st.URI != "" && st.Kind != OpReadResource)
		unexpected("arguments", len(st.Arguments) > 0 && st.Kind != OpCallTool && st.Kind != OpGetPrompt)
		unexpected("timeout", st.Timeout != 0 && !isReq)
		unexpected("abortAfter", st.AbortAfter != 0 && !isReq)
		unexpected("probability", st.Probability != 0 && st.Kind != StepEndSession)
		unexpected("choices", len(st.Choices) > 0 && st.Kind != StepChoose)
		unexpected("think time", st.Think != (Think{}) && st.Kind != StepThink)
		unexpected("capture", len(st.Captures) > 0 && !isReq)
		unexpected("check", len(st.Checks) > 0 && !isReq)
		unexpected("http", st.HTTP != nil && st.Kind != StepHTTP)
		unexpected("inputs", st.Inputs != nil && st.Kind != OpCallTool && st.Kind != OpGetPrompt && st.Kind != OpReadResource)
		unexpected("task", st.Task != nil && st.Kind != OpCallTool)
		compileRoundTrips(pe, st, &c, sp) // roundtrips.go
		switch {
		case isReq:
			compileRequest(pe, cs, st, &c, sp)
		case st.Kind == StepThink:
			compileThink(pe, st, sp)
			c.Think = st.Think
		case st.Kind == StepEndSession:
			if !(st.Probability > 0 && st.Probability <= 1) {
				pe.Add(st.line, sp+".probability", "must be in (0, 1] (got %v)", st.Probability)
			}
			c.Probability = st.Probability
		case st.Kind == StepChoose:
			if depth >= maxChooseDepth {
				pe.Add(st.line, sp, "choose nested deeper than %d", maxChooseDepth)
				continue
			}
			if len(st.Choices) == 0 {
				pe.Add(st.line, sp, "no choices; want at least one")
			}
			total := 0
			for j, ch := range st.Choices {
				cp := fmt.Sprintf("%s[%d]", sp, j)
				intIn(pe, ch.line, cp+".weight", int64(ch.Weight), 1, maxWeight)
				if len(ch.Steps) == 0 {
					pe.Add(ch.line, cp+".steps", "empty; want at least one step")
				}
				total += max(ch.Weight, 1)
				c.CumWeights = append(c.CumWeights, total)
				c.Choices = append(c.Choices, compileSteps(pe, cs, ch.Steps, cp+".steps", depth+1, count))
			}
		default:
			pe.Add(st.line, fmt.Sprintf("%s[%d]", path, i), "unknown step %q; want one of %s", textutil.Truncate(st.Kind, 40), strings.Join(StepKinds, ", "))
			continue
		}
		out = append(out, c)
	}
	return out
}

// StepKinds lists the step kinds, as a scenario file names them.
var StepKinds = []string{OpInitialize, OpPing, OpListTools, OpCallTool, OpListResources, OpReadResource,
	OpListPrompts, OpGetPrompt, OpDiscover, StepThink, StepEndSession, StepChoose, StepHTTP}

func compileRequest(pe *Problems, cs *CompiledScenario, st *Step, c *CompiledStep, sp string) {
	timeout := cs.RequestTimeout
	if st.Timeout != 0 {
		durIn(pe, st.line, sp+".timeout", st.Timeout, 0, MaxRequestTimeout, true)
		timeout = st.Timeout.D()
	}
	if st.AbortAfter != 0 {
		switch {
		case st.AbortAfter < 0:
			pe.Add(st.line, sp+".abortAfter", "must be > 0 (got %s)", st.AbortAfter)
		case st.AbortAfter.D() >= timeout:
			pe.Add(st.line, sp+".abortAfter", "%s is not shorter than the request timeout (%s): the timeout would fire first", st.AbortAfter, timeout)
		}
	}
	var err error
	switch st.Kind {
	case OpCallTool, OpGetPrompt:
		if strings.TrimSpace(st.Name) == "" {
			pe.Add(st.line, sp+".name", "missing; want the %s name", map[string]string{OpCallTool: "tool", OpGetPrompt: "prompt"}[st.Kind])
		} else if c.Name, err = compileText(st.Name); err != nil {
			pe.Add(st.line, sp+".name", "%v", err)
		}
		if c.Args, err = compileArgs(st.Arguments, st.Kind == OpGetPrompt); err != nil {
			pe.Add(st.line, sp+".arguments", "%v", err)
		}
	case OpReadResource:
		if strings.TrimSpace(st.URI) == "" {
			pe.Add(st.line, sp+".uri", "missing; want the resource URI")
		} else if c.URI, err = compileText(st.URI); err != nil {
			pe.Add(st.line, sp+".uri", "%v", err)
		}
	}
	compileStepExtras(pe, cs, st, c, sp)
}

func compileThink(pe *Problems, st *Step, sp string) {
	t := st.Think
	switch t.Distribution {
	case ThinkFixed:
		durIn(pe, st.line, sp, t.Duration, 0, maxThinkTime, false)
	case ThinkExponential:
		durIn(pe, st.line, sp+".exponential", t.Duration, 0, maxThinkTime, true)
	case ThinkUniform:
		durIn(pe, st.line, sp+".uniform", t.Min, 0, maxThinkTime, false)
		durIn(pe, st.line, sp+".uniform", t.Max, 0, maxThinkTime, false)
		if t.Max < t.Min {
			pe.Add(st.line, sp+".uniform", "max (%s) is less than min (%s)", t.Max, t.Min)
		}
	default:
		pe.Add(st.line, sp, "unknown distribution %q; want %s, %s or %s", textutil.Truncate(t.Distribution, 30), ThinkFixed, ThinkUniform, ThinkExponential)
	}
}

// progresses reports whether every pass through steps sends a request or
// thinks for a while.
func progresses(steps []CompiledStep) bool {
	for _, c := range steps {
		switch {
		case c.Kind == StepThink:
			if c.Think.Duration > 0 || c.Think.Min > 0 || c.Think.Distribution == ThinkExponential {
				return true
			}
		case c.Kind == StepChoose:
			all := len(c.Choices) > 0
			for _, ch := range c.Choices {
				all = all && progresses(ch)
			}
			if all {
				return true
			}
		case c.Kind != StepEndSession:
			return true
		}
	}
	return false
}
