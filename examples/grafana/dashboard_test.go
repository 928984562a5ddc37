// Package grafana holds a Grafana dashboard of a live leakbench run (load,
// errors, latency, stuck sessions, pool state) over the metrics that
// `leakbench run|signoff --metrics-addr` serves; the tests check that every
// query names a metric leakbench exports, and every label it uses (in a
// selector, a by/without clause or a legend) is one that metric has.
package grafana_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
}

var (
	strLit   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	braces   = regexp.MustCompile(`\{[^}]*\}`)
	brackets = regexp.MustCompile(`\[[^\]]*\]`)
	grouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	ident    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	keywords = []string{"by", "without", "on", "ignoring", "bool", "and", "or", "unless", "offset", "e"}
)

// metricsOf returns the metric names a PromQL expression selects.
func metricsOf(expr string) []string {
	e := strLit.ReplaceAllString(expr, `""`)
	e = braces.ReplaceAllString(e, " ")
	e = brackets.ReplaceAllString(e, " ")
	e = grouping.ReplaceAllString(e, " ")
	var out []string
	for _, m := range ident.FindAllStringSubmatch(e, -1) {
		if m[1] != "" || slices.Contains(keywords, m[0]) { // a function call, or a keyword
			continue
		}
		out = append(out, m[0])
	}
	return out
}

func exported(name string, names []string) bool {
	for _, n := range names {
		if name == n {
			return true
		}
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if name == n+suf {
				return true
			}
		}
	}
	return false
}

func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("leakbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string  `json:"title"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	names := append(live.MetricNames(), probes.MetricNames()...)
	if len(live.MetricNames()) == 0 || len(probes.MetricNames()) == 0 {
		t.Fatalf("no exported names collected: engine %v probe %v", live.MetricNames(), probes.MetricNames())
	}
	used := map[string]bool{}
	graphs := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		graphs++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			ms := metricsOf(tg.Expr)
			if len(ms) == 0 {
				t.Errorf("panel %q: query %q names no metric", p.Title, tg.Expr)
			}
			for _, m := range ms {
				used[m] = true
				if !exported(m, names) {
					t.Errorf("panel %q: %s is not a metric leakbench exports (%s)", p.Title, m, strings.Join(names, ", "))
				}
			}
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(string); ok && strings.Contains(q, "(") {
			for _, m := range metricsOf(strings.TrimSuffix(strings.TrimPrefix(q, "label_values("), ")")) {
				if m != "job" && !exported(m, names) {
					t.Errorf("variable query %q: %s is not exported", q, m)
				}
			}
		}
	}
	// The dashboard shows what it says: load, errors, latency, stuck
	// sessions and pool state.
	for _, want := range []string{"leakbench_vus", "leakbench_mcp_req_failures_total", "leakbench_mcp_req_duration_seconds",
		"leakbench_probe_stuck_idle_in_transaction_sessions", "leakbench_probe_app_pool_acquired_connections", "leakbench_probe_pgbouncer_clients_waiting"} {
		if !used[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
	if graphs < 8 {
		t.Errorf("%d panels", graphs)
	}
}

func TestMetricsOf(t *testing.T) {
	got := metricsOf(`histogram_quantile(0.99, sum by (le) (rate(leakbench_probe_release_latency_seconds_bucket{job=~"a|b"}[$__rate_interval]))) / clamp_min(sum(x_total), 1e-9)`)
	if !slices.Equal(got, []string{"leakbench_probe_release_latency_seconds_bucket", "x_total"}) {
		t.Fatalf("%v", got)
	}
}

// TestDashboardQueriesUseTheMetricsLabels: a label the metric does not
// have selects nothing and groups everything into one series, and
// Grafana shows an empty panel or a legend "{{metohd}}" without an error;
// so every label a query uses is checked against the labels leakbench
// really exports: the live engine's as a scrape of live.Serve shows them,
// the probe's as probes/metrics.go registers them.
func TestDashboardQueriesUseTheMetricsLabels(t *testing.T) {
	raw, err := os.ReadFile("leakbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	labels := liveLabels(t)
	maps.Copy(labels, probeLabels(t))
	checked := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, bad := range badLabels(tg.Expr, tg.LegendFormat, labels) {
				t.Errorf("panel %q: %s", p.Title, bad)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("%d queries checked", checked)
	}
}

// TestBadLabels: the check finds a misspelled label wherever a query
// uses one, and passes the dashboard's own shapes.
func TestBadLabels(t *testing.T) {
	labels := map[string][]string{
		"reqs_total":             {"scenario", "method"},
		"fail_total":             {"scenario", "method", "kind"},
		"lat_seconds":            {"method", "quantile"},
		"release_seconds_bucket": {"le"},
	}
	for _, tt := range []struct {
		expr, legend string
		bad          int
	}{
		{`sum by (method) (rate(reqs_total{job=~"$job"}[5m]))`, "{{method}}", 0},
		{`max by (method) (lat_seconds{job=~"$job",quantile="0.95"})`, "p95 {{method}}", 0},
		{`histogram_quantile(0.99, sum by (le) (rate(release_seconds_bucket[1m])))`, "p99", 0},
		{`sum(rate(fail_total{kind!~"aborted"}[1m])) / clamp_min(sum(rate(reqs_total[1m])), 1e-9)`, "failed / all", 0},
		{`rate(reqs_total[1m])`, "{{scenario}} {{instance}}", 0},
		{`sum(rate(fail_total[1m])) by (kind)`, "{{kind}}", 0},
		{`sum by (metohd) (rate(reqs_total[5m]))`, "{{metohd}}", 1}, // the legend follows the by clause
		{`sum by (method) (rate(reqs_total{knd="x"}[5m]))`, "{{method}}", 1},
		{`max by (method) (lat_seconds{quantille="0.95"})`, "", 1},
		{`sum by (method) (rate(reqs_total[5m]))`, "{{scenario}}", 1}, // grouped away
		{`sum by (kind) (rate(reqs_total[5m]))`, "", 1},               // kind is fail_total's
		{`sum(rate(fail_total[1m])) by (knd)`, "", 1},
		{`histogram_quantile(0.5, sum by (lee) (rate(release_seconds_bucket[1m])))`, "", 1},
	} {
		if got := badLabels(tt.expr, tt.legend, labels); len(got) != tt.bad {
			t.Errorf("%s (legend %q): %d bad labels %q, want %d", tt.expr, tt.legend, len(got), got, tt.bad)
		}
	}
}

// scrapeLabels are on every series Prometheus stores, whatever exports it.
var scrapeLabels = []string{"job", "instance"}

var (
	selector  = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}`)
	matcher   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	groupExpr = regexp.MustCompile(`\b(by|without)\s*\(([^)]*)\)`)
	legendVar = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

// badLabels lists the labels expr uses that its metrics lack: in a
// selector, the selected metric must have it; in by (...) or without
// (...), every metric of the aggregated expression; in the legend, the
// series the query returns: the outermost by clause's labels if it has
// one, else labels every metric of the query has.
func badLabels(expr, legend string, labels map[string][]string) []string {
	var bad []string
	has := func(metric, label string) bool {
		return slices.Contains(scrapeLabels, label) || slices.Contains(labels[metric], label)
	}
	e := strLit.ReplaceAllString(expr, `""`)
	for _, m := range selector.FindAllStringSubmatch(e, -1) {
		for _, l := range matcher.FindAllStringSubmatch(m[2], -1) {
			if !has(m[1], l[1]) {
				bad = append(bad, fmt.Sprintf("selector %s{%s}: %s has no label %q (it has %v)", m[1], m[2], m[1], l[1], labels[m[1]]))
			}
		}
	}
	var outer []string // the first by clause's labels: the query's result
	grouped := false
	for i, g := range groupExpr.FindAllStringSubmatchIndex(e, -1) {
		arg := aggregated(e, g[0], g[1])
		var ls []string
		for l := range strings.SplitSeq(e[g[4]:g[5]], ",") {
			if l = strings.TrimSpace(l); l != "" {
				ls = append(ls, l)
			}
		}
		for _, l := range ls {
			for _, m := range metricsOf(arg) {
				if !has(m, l) {
					bad = append(bad, fmt.Sprintf("%s (%s): %s has no label %q (it has %v)", e[g[2]:g[3]], e[g[4]:g[5]], m, l, labels[m]))
				}
			}
		}
		if i == 0 && e[g[2]:g[3]] == "by" {
			outer, grouped = ls, true
		}
	}
	for _, v := range legendVar.FindAllStringSubmatch(legend, -1) {
		l := v[1]
		switch {
		case grouped && !slices.Contains(outer, l):
			bad = append(bad, fmt.Sprintf("legend %q: the query groups by (%s), so %q is gone", legend, strings.Join(outer, ", "), l))
		case !grouped:
			for _, m := range metricsOf(e) {
				if !has(m, l) {
					bad = append(bad, fmt.Sprintf("legend %q: %s has no label %q (it has %v)", legend, m, l, labels[m]))
				}
			}
		}
	}
	return bad
}

// aggregated is the expression a by/without clause at e[start:end]
// groups: the parenthesized argument after it (sum by (x) (...)), or the
// one before it (sum(...) by (x)).
func aggregated(e string, start, end int) string {
	rest := strings.TrimLeft(e[end:], " ")
	if strings.HasPrefix(rest, "(") {
		return balanced(rest)
	}
	before := strings.TrimRight(e[:start], " ")
	depth := 0
	for i := len(before) - 1; i >= 0; i-- {
		switch before[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return before[i:]
			}
		}
	}
	return ""
}

// balanced is the parenthesized group s starts with.
func balanced(s string) string {
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[:i+1]
			}
		}
	}
	return s
}

// liveLabels scrapes live.Serve, fed a snapshot with a series of every
// kind and every feature counter, and returns each metric's labels as the
// scrape shows them (a summary's quantile included).
func liveLabels(t *testing.T) map[string][]string {
	t.Helper()
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	_ = h.RecordValue(1500)
	snap := live.Snapshot{
		Series: []live.Series{
			{Scenario: "s", Kind: live.KindMCP, Method: "tools/call", Name: "echo", Requests: 2, Aborted: 1, Failures: map[string]int64{"timeout": 1}, Hist: h},
			{Scenario: "s", Kind: live.KindHTTP, Method: "GET", Name: "login", Status: 500, Requests: 1, Failures: map[string]int64{"http_5xx": 1}, Hist: h},
			{Scenario: "s", Kind: live.KindIteration, Hist: h},
		},
		Scenarios: []live.Scenario{{Name: "s", Iterations: 1, Dropped: 1, VUs: 1, VUsMax: 1, Features: &rundir.FeatureStats{
			CacheHits: map[string]int64{"tools/list": 1}, InputRoundTrips: 1,
			Tasks:  &rundir.TaskStats{Created: 1},
			Listen: &rundir.ListenStats{Streams: 1, Events: map[string]int64{"notifications/progress": 1}},
		}}},
		Generator: &live.Generator{CPUs: 2, Cores: 0.2, MachineBusy: 0.3, MachineKnown: true, LateSamples: 1, LateP50: 0.001, LateP99: 0.002, LateMax: 0.003},
	}
	srv, err := live.Serve("127.0.0.1:0", func() live.Snapshot { return snap }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	out := map[string][]string{}
	for name, mf := range mfs {
		var ls []string
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				ls = append(ls, lp.GetName())
			}
		}
		slices.Sort(ls)
		ls = slices.Compact(ls)
		out[name] = ls
		if mf.GetType() == dto.MetricType_SUMMARY {
			out[name] = append(slices.Clip(ls), "quantile")
			out[name+"_sum"], out[name+"_count"] = ls, ls
		}
	}
	// Every live metric must be in the scrape, or its labels go unchecked.
	for _, n := range live.MetricNames() {
		if _, ok := out[n]; !ok {
			t.Errorf("the test's snapshot gives no %s: add what makes it appear", n)
		}
	}
	return out
}

// probeLabels reads the probe's metrics from probes/metrics.go, where
// they are registered: each prometheus.NewXxx(prometheus.XxxOpts{Name:
// ...}, []string{labels}) with the file's namespace constant. A
// histogram's buckets add le. (The probe's registry needs a running
// poller; the source is the registration itself.) The names found must be
// probes.MetricNames(), so that a registration this reading misses fails.
func probeLabels(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join("..", "..", "probes", "metrics.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Names) == 1 && len(v.Values) == 1 {
			if s, ok := stringLit(v.Values[0]); ok {
				consts[v.Names[0].Name] = s
			}
		}
		return true
	})
	out := map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !strings.HasPrefix(sel.Sel.Name, "New") {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "prometheus" {
			return true
		}
		opts, ok := call.Args[0].(*ast.CompositeLit)
		if !ok {
			return true
		}
		var ns, name string
		for _, el := range opts.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			v, ok := stringLit(kv.Value)
			if id, isIdent := kv.Value.(*ast.Ident); !ok && isIdent {
				v, ok = consts[id.Name]
			}
			switch k, isIdent := kv.Key.(*ast.Ident); {
			case !isIdent || !ok:
			case k.Name == "Namespace":
				ns = v
			case k.Name == "Name":
				name = v
			}
		}
		if name == "" {
			return true
		}
		full := strings.TrimPrefix(ns+"_"+name, "_")
		var ls []string
		if len(call.Args) > 1 {
			if lst, ok := call.Args[1].(*ast.CompositeLit); ok {
				for _, el := range lst.Elts {
					if s, ok := stringLit(el); ok {
						ls = append(ls, s)
					}
				}
			}
		}
		out[full] = ls
		if strings.HasPrefix(sel.Sel.Name, "NewHistogram") {
			out[full+"_bucket"] = append(slices.Clip(ls), "le")
			out[full+"_sum"], out[full+"_count"] = ls, ls
		}
		return true
	})
	want := probes.MetricNames()
	var found []string
	for _, n := range want {
		if _, ok := out[n]; !ok {
			found = append(found, n)
		}
	}
	if len(found) > 0 || len(want) == 0 {
		t.Fatalf("probes/metrics.go read as registering %v; probes.MetricNames() also has %v: the reading misses a registration", slices.Sorted(maps.Keys(out)), found)
	}
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
