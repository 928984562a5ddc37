package threshold

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/leakbench/leakbench/scenarios/internal/textutil"
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
	MetricChecks            = "checks"             // rate: checks passed / checks judged
	MetricHTTPReqDuration   = "http_req_duration"  // trend, ms: http steps answered
	MetricHTTPReqFailed     = "http_req_failed"    // rate: http steps failed / sent (aborted, canceled excluded)
	MetricHTTPReqs          = "http_reqs"          // counter: http steps sent
	// MetricGeneratorLag is the load generator's own lateness, ms: how
	// late it started what it had scheduled (think times' ends,
	// arrival-rate iterations, the requests after them). A run whose
	// generator ran late measured leakbench's delay along with the
	// target's: generator_lag: ["p(99)<50"] fails such a run.
	MetricGeneratorLag = "generator_lag" // trend, ms
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
	MetricChecks:            {mRate, []string{"scenario", "check"}},
	MetricHTTPReqDuration:   {mTrend, []string{"scenario", "method", "name", "status"}},
	MetricHTTPReqFailed:     {mRate, []string{"scenario", "method", "name", "status"}},
	MetricHTTPReqs:          {mCounter, []string{"scenario", "method", "name", "status"}},
	// The engine's, not a scenario's: its schedule is one for all.
	MetricGeneratorLag: {mTrend, nil},
}

// aggregations allowed per metric type, as k6 has them.
var aggsByType = map[metricType][]string{
	mTrend:   {"avg", "min", "med", "max", "p(N)"},
	mRate:    {"rate"},
	mCounter: {"count", "rate"},
	mGauge:   {"value", "min", "max"},
}

// Tag is one tag:value of a threshold's filter, e.g. method:tools/call.
type Tag struct{ Name, Value string }

// Expr is a parsed threshold expression such as p(95)<500.
type Expr struct {
	Agg   string  // avg, min, med, max, p, rate, count, value
	Pct   float64 // for p(N)
	Op    string  // <, <=, >, >=, ==, !=
	Value float64
}

func (x Expr) String() string {
	a := x.Agg
	if a == "p" {
		a = "p(" + strconv.FormatFloat(x.Pct, 'g', -1, 64) + ")"
	}
	return a + x.Op + strconv.FormatFloat(x.Value, 'g', -1, 64)
}

// ParseMetricKey parses a threshold's metric key, "name" or
// "name{tag:value,...}": the name must be a metric above, each tag one it
// can be filtered by. Whether a tag's value names something real (a
// scenario, a method) is the plan's to check, since only it knows them.
func ParseMetricKey(key string) (string, []Tag, error) {
	name, rest, hasTags := strings.Cut(strings.TrimSpace(key), "{")
	name = strings.TrimSpace(name)
	def, ok := metricDefs[name]
	if !ok {
		return "", nil, fmt.Errorf("unknown metric %q; want one of %s", textutil.Truncate(name, 40), strings.Join(metricNames(), ", "))
	}
	if !hasTags {
		return name, nil, nil
	}
	body, ok := strings.CutSuffix(strings.TrimSpace(rest), "}")
	if !ok || strings.ContainsAny(body, "{}") {
		return "", nil, fmt.Errorf("metric %q: tag filter must be {tag:value,...}", textutil.Truncate(key, 60))
	}
	var f []Tag
	for item := range strings.SplitSeq(body, ",") {
		tag, value, ok := strings.Cut(item, ":")
		tag, value = strings.TrimSpace(tag), strings.TrimSpace(value)
		switch {
		case !ok || tag == "" || value == "":
			return "", nil, fmt.Errorf("metric %q: %q is not tag:value", textutil.Truncate(key, 60), textutil.Truncate(item, 40))
		case len(def.tags) == 0:
			return "", nil, fmt.Errorf("metric %s takes no tag filter", name)
		case !slices.Contains(def.tags, tag):
			return "", nil, fmt.Errorf("metric %s has no tag %q; its tags are %s", name, textutil.Truncate(tag, 30), strings.Join(def.tags, ", "))
		}
		for _, g := range f {
			if g.Name == tag {
				return "", nil, fmt.Errorf("metric %q: tag %q given twice", textutil.Truncate(key, 60), tag)
			}
		}
		f = append(f, Tag{tag, value})
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

// ParseExpression parses a threshold expression in k6's syntax: AGG OP
// NUMBER, e.g. p(95)<500, rate<0.01, max<10, where AGG is avg, min, med,
// max, p(N), rate, count or value and OP is <, <=, >, >=, == (or ===) or
// != (or !==). It checks the syntax only; which aggregations fit a metric
// is the caller's to say.
func ParseExpression(expr string) (Expr, error) {
	var x Expr
	s := strings.TrimSpace(expr)
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return x, fmt.Errorf("threshold %q has no comparison (<, <=, >, >=, ==, !=)", textutil.Truncate(expr, 60))
	}
	agg, rest := strings.TrimSpace(s[:i]), s[i:]
	switch {
	case strings.HasPrefix(rest, "==="), strings.HasPrefix(rest, "!=="):
		x.Op, rest = rest[:2], rest[3:]
	case strings.HasPrefix(rest, "<="), strings.HasPrefix(rest, ">="), strings.HasPrefix(rest, "=="), strings.HasPrefix(rest, "!="):
		x.Op, rest = rest[:2], rest[2:]
	case rest[0] == '<' || rest[0] == '>':
		x.Op, rest = rest[:1], rest[1:]
	default:
		return x, fmt.Errorf("threshold %q: bad comparison; want <, <=, >, >=, == or !=", textutil.Truncate(expr, 60))
	}
	num := strings.TrimSpace(rest)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return x, fmt.Errorf("threshold %q: %q is not a number", textutil.Truncate(expr, 60), textutil.Truncate(num, 30))
	}
	x.Value = v
	switch agg {
	case "avg", "min", "med", "max", "rate", "count", "value":
		x.Agg = agg
	default:
		inner, ok := strings.CutPrefix(agg, "p(")
		if inner, ok2 := strings.CutSuffix(inner, ")"); ok && ok2 {
			p, err := strconv.ParseFloat(strings.TrimSpace(inner), 64)
			if err != nil || !(p >= 0 && p <= 100) {
				return x, fmt.Errorf("threshold %q: percentile must be a number in [0, 100]", textutil.Truncate(expr, 60))
			}
			x.Agg, x.Pct = "p", p
			break
		}
		return x, fmt.Errorf("threshold %q: unknown aggregation %q; want avg, min, med, max, p(N), rate, count or value", textutil.Truncate(expr, 60), textutil.Truncate(agg, 30))
	}
	return x, nil
}

// CheckAggregation reports an error unless x's aggregation is one that
// metric's type has, as k6 allows them (a trend's p(N), a rate's rate,
// ...). metric is a name ParseMetricKey accepted.
func CheckAggregation(metric string, x Expr) error {
	typ := metricDefs[metric].typ
	agg := x.Agg
	if agg == "p" {
		agg = "p(N)"
	}
	if !slices.Contains(aggsByType[typ], agg) {
		return fmt.Errorf("%s is not an aggregation of this metric; want %s", agg, strings.Join(aggsByType[typ], ", "))
	}
	return nil
}

// Holds reports whether an observed value passes the expression.
func (x Expr) Holds(observed float64) bool {
	switch x.Op {
	case "<":
		return observed < x.Value
	case "<=":
		return observed <= x.Value
	case ">":
		return observed > x.Value
	case ">=":
		return observed >= x.Value
	case "==":
		return observed == x.Value
	case "!=":
		return observed != x.Value
	}
	return false
}
