// Package grafana holds a Grafana dashboard of a live leakbench run (load,
// errors, latency, stuck sessions, pool state) over the metrics that
// `leakbench run|signoff --metrics-addr` serves; the test checks that every
// query names a metric leakbench exports.
package grafana_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leakbench/leakbench/probes"
	"github.com/leakbench/leakbench/scenarios/engine/live"
)

type panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
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
