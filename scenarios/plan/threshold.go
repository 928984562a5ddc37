package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Metric names, as thresholds and /metrics know them (k6's names with
// http_ replaced by mcp_).
const (
	MetricReqDuration       = "mcp_req_duration"   // trend, ms: answered requests
	MetricReqFailed         = "mcp_req_failed"     // rate: failed / (sent - aborted - canceled)
	MetricReqs              = "mcp_reqs"           // counter: requests sent
	MetricReqAborted        = "mcp_req_aborted"    // counter: requests given up with abortAfter
	MetricIterations        = "iterations"         // counter: completed iterations
	MetricIterationDuration = "iteration_duration" // trend, ms
	MetricDroppedIterations = "dropped_iterations" // counter
	MetricVUs               = "vus"                // gauge: active users
	MetricVUsMax            = "vus_max"            // gauge: peak active users
)

type metricType uint8

const (
	mTrend metricType = iota
	mRate
	mCounter
	mGauge
)

// metricDefs lists every metric with its type and the tags it can be
// filtered by.
var metricDefs = map[string]struct {
	typ  metricType
	tags []string
}{
	MetricReqDuration:       {mTrend, []string{"scenario", "method", "name"}},
	MetricReqFailed:         {mRate, []string{"scenario", "method", "name", "kind"}},
	MetricReqs:              {mCounter, []string{"scenario", "method", "name"}},
	MetricReqAborted:        {mCounter, []string{"scenario", "method", "name"}},
	MetricIterations:        {mCounter, []string{"scenario"}},
	MetricIterationDuration: {mTrend, []string{"scenario"}},
	MetricDroppedIterations: {mCounter, []string{"scenario"}},
	MetricVUs:               {mGauge, []string{"scenario"}},
	MetricVUsMax:            {mGauge, []string{"scenario"}},
}

// aggregations allowed per metric type, as k6 has them.
var aggsByType = map[metricType][]string{
	mTrend:   {"avg", "min", "med", "max", "p(N)"},
	mRate:    {"rate"},
	mCounter: {"count", "rate"},
	mGauge:   {"value", "min", "max"},
}

// tagFilter is a parsed {tag:value,...}; keys are unique.
type tagFilter []struct{ tag, value string }

// thresholdExpr is a parsed expression such as p(95)<500.
type thresholdExpr struct {
	agg   string  // avg, min, med, max, p, rate, count, value
	pct   float64 // for p(N)
	op    string  // <, <=, >, >=, ==, !=
	value float64
}

func (x thresholdExpr) String() string {
	a := x.agg
	if a == "p" {
		a = "p(" + strconv.FormatFloat(x.pct, 'g', -1, 64) + ")"
	}
	return a + x.op + strconv.FormatFloat(x.value, 'g', -1, 64)
}

// parseMetricKey parses "name" or "name{tag:value,...}".
func parseMetricKey(key string) (string, tagFilter, error) {
	name, rest, hasTags := strings.Cut(strings.TrimSpace(key), "{")
	name = strings.TrimSpace(name)
	def, ok := metricDefs[name]
	if !ok {
		return "", nil, fmt.Errorf("unknown metric %q; want one of %s", truncate(name, 40), strings.Join(metricNames(), ", "))
	}
	if !hasTags {
		return name, nil, nil
	}
	body, ok := strings.CutSuffix(strings.TrimSpace(rest), "}")
	if !ok || strings.ContainsAny(body, "{}") {
		return "", nil, fmt.Errorf("metric %q: tag filter must be {tag:value,...}", truncate(key, 60))
	}
	var f tagFilter
	for item := range strings.SplitSeq(body, ",") {
		tag, value, ok := strings.Cut(item, ":")
		tag, value = strings.TrimSpace(tag), strings.TrimSpace(value)
		switch {
		case !ok || tag == "" || value == "":
			return "", nil, fmt.Errorf("metric %q: %q is not tag:value", truncate(key, 60), truncate(item, 40))
		case !slices.Contains(def.tags, tag):
			return "", nil, fmt.Errorf("metric %s has no tag %q; its tags are %s", name, truncate(tag, 30), strings.Join(def.tags, ", "))
		}
		for _, g := range f {
			if g.tag == tag {
				return "", nil, fmt.Errorf("metric %q: tag %q given twice", truncate(key, 60), tag)
			}
		}
		f = append(f, struct{ tag, value string }{tag, value})
	}
	return name, f, nil
}

func metricNames() []string {
	names := make([]string, 0, len(metricDefs))
	for n := range metricDefs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// parseExpression parses k6's threshold syntax: AGG OP NUMBER, where AGG is
// avg, min, med, max, p(N), rate, count or value and OP is <, <=, >, >=,
// == (or ===) or != (or !==).
func parseExpression(expr string) (thresholdExpr, error) {
	var x thresholdExpr
	s := strings.TrimSpace(expr)
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return x, fmt.Errorf("threshold %q has no comparison (<, <=, >, >=, ==, !=)", truncate(expr, 60))
	}
	agg, rest := strings.TrimSpace(s[:i]), s[i:]
	switch {
	case strings.HasPrefix(rest, "==="), strings.HasPrefix(rest, "!=="):
		x.op, rest = rest[:2], rest[3:]
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, ">="), strings.HasPrefix(rest, "=="), strings.HasPrefix(rest, "!="):
		x.op, rest = rest[:2], rest[2:]
	case rest[0] == '<' || rest[0] == '>':
		x.op, rest = rest[:1], rest[1:]
	default:
		return x, fmt.Errorf("threshold %q: bad comparison; want <, <=, >, >=, == or !=", truncate(expr, 60))
	}
	num := strings.TrimSpace(rest)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return x, fmt.Errorf("threshold %q: %q is not a number", truncate(expr, 60), truncate(num, 30))
	}
	x.value = v
	switch agg {
	case "avg", "min", "med", "max", "rate", "count", "value":
		x.agg = agg
	default:
		inner, ok := strings.CutPrefix(agg, "p(")
		if inner, ok2 := strings.CutSuffix(inner, ")"); ok && ok2 {
			p, err := strconv.ParseFloat(strings.TrimSpace(inner), 64)
			if err != nil || !(p >= 0 && p <= 100) {
				return x, fmt.Errorf("threshold %q: percentile must be a number in [0, 100]", truncate(expr, 60))
			}
			x.agg, x.pct = "p", p
			break
		}
		return x, fmt.Errorf("threshold %q: unknown aggregation %q; want avg, min, med, max, p(N), rate, count or value", truncate(expr, 60), truncate(agg, 30))
	}
	return x, nil
}

// cthreshold is a checked threshold, ready to evaluate.
type cthreshold struct {
	src    Threshold
	metric string
	typ    metricType
	filter tagFilter
	expr   thresholdExpr
}

// compileThreshold checks t against the plan's scenario names.
func compileThreshold(t Threshold, scenarioNames []string) (*cthreshold, error) {
	name, filter, err := parseMetricKey(t.Metric)
	if err != nil {
		return nil, err
	}
	for _, f := range filter {
		switch f.tag {
		case "scenario":
			if !slices.Contains(scenarioNames, f.value) {
				return nil, fmt.Errorf("metric %q: no scenario named %q", t.Metric, truncate(f.value, 40))
			}
		case "method":
			if _, ok := opIndex(f.value); !ok {
				return nil, fmt.Errorf("metric %q: unknown method %q; want one of %s", t.Metric, truncate(f.value, 40), strings.Join(opNames[:numRequestOps], ", "))
			}
		case "kind":
			if !slices.Contains(Kinds, f.value) {
				return nil, fmt.Errorf("metric %q: unknown error kind %q; want one of %s", t.Metric, truncate(f.value, 40), strings.Join(Kinds, ", "))
			}
		}
	}
	x, err := parseExpression(t.Expression)
	if err != nil {
		return nil, err
	}
	typ := metricDefs[name].typ
	agg := x.agg
	if agg == "p" {
		agg = "p(N)"
	}
	if !slices.Contains(aggsByType[typ], agg) {
		return nil, fmt.Errorf("threshold %q on %s: %s is not an aggregation of this metric; want %s",
			t.Expression, name, agg, strings.Join(aggsByType[typ], ", "))
	}
	if t.DelayAbortEval < 0 {
		return nil, fmt.Errorf("delayAbortEval must be >= 0 (got %s)", t.DelayAbortEval)
	}
	return &cthreshold{src: t, metric: name, typ: typ, filter: filter, expr: x}, nil
}

func (x thresholdExpr) holds(observed float64) bool {
	switch x.op {
	case "<":
		return observed < x.value
	case "<=":
		return observed <= x.value
	case ">":
		return observed > x.value
	case ">=":
		return observed >= x.value
	case "==":
		return observed == x.value
	case "!=":
		return observed != x.value
	}
	return false
}

// ThresholdResult is the verdict of one threshold.
type ThresholdResult struct {
	Metric      string  `json:"metric"`     // e.g. mcp_req_duration{method:tools/call}
	Expression  string  `json:"expression"` // e.g. p(95)<500
	Pass        bool    `json:"pass"`
	Observed    float64 `json:"observed"`
	AbortOnFail bool    `json:"abort_on_fail"`
	// Samples is how many values the observation rests on (requests,
	// iterations; for gauges 1): 0 means the filter matched nothing.
	Samples int64 `json:"samples"`
}
