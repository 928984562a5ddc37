package threshold

import (
	"strings"
	"testing"
)

func TestParseExpression(t *testing.T) {
	tests := []struct {
		in, want string // want: canonical form, or "error: substring"
	}{
		{"p(95)<500", "p(95)<500"},
		{" p( 99.9 ) <= 1e3 ", "p(99.9)<=1000"},
		{"avg<200", "avg<200"},
		{"med>=1.5", "med>=1.5"},
		{"rate<0.01", "rate<0.01"},
		{"count===0", "count==0"},
		{"count!==0", "count!=0"},
		{"value != 3", "value!=3"},
		{"max>-1", "max>-1"},
		{"p(101)<5", "error: percentile must be"},
		{"p95<5", "error: unknown aggregation"},
		{"avg<", "error: is not a number"},
		{"avg<NaN", "error: is not a number"},
		{"avg 5", "error: has no comparison"},
		{"avg=5", "error: bad comparison"},
		{"avg<5 ms", "error: is not a number"},
		{"", "error: has no comparison"},
	}
	for _, tt := range tests {
		x, err := ParseExpression(tt.in)
		if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %v, want error %q", tt.in, err, want)
			}
			continue
		}
		if err != nil || x.String() != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.in, x.String(), err, tt.want)
		}
	}
}

func TestParseMetricKey(t *testing.T) {
	name, f, err := ParseMetricKey(" mcp_req_duration{ method : tools/call , name:echo }")
	if err != nil || name != MetricReqDuration || len(f) != 2 || f[0].Value != "tools/call" || f[1].Name != "name" {
		t.Fatalf("%q %+v %v", name, f, err)
	}
	for key, want := range map[string]string{
		"nope":                           "unknown metric",
		"mcp_reqs{method}":               "is not tag:value",
		"mcp_reqs{method:a":              "tag filter must be",
		"mcp_reqs{method:a}{x:y}":        "tag filter must be",
		"mcp_reqs{method:a,method:b}":    "given twice",
		"mcp_req_duration{kind:timeout}": "has no tag",
		"iterations{method:ping}":        "has no tag",
	} {
		if _, _, err := ParseMetricKey(key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", key, err, want)
		}
	}
}

func TestThresholdHolds(t *testing.T) {
	for _, tt := range []struct {
		expr string
		v    float64
		want bool
	}{
		{"p(95)<500", 499.9, true}, {"p(95)<500", 500, false}, {"avg<=5", 5, true},
		{"rate>0.5", 0.5, false}, {"count>=3", 3, true}, {"count==0", 0, true}, {"count!=0", 0, false},
	} {
		x, err := ParseExpression(tt.expr)
		if err != nil || x.Holds(tt.v) != tt.want {
			t.Errorf("%s with %v: %v (%v), want %v", tt.expr, tt.v, x.Holds(tt.v), err, tt.want)
		}
	}
}

// FuzzThreshold: the threshold parser never panics, and what it accepts
// prints to a form that parses back to the same threshold.
func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"p(95)<500", "rate<0.01", "count===0", " avg >= 1e-3 ", "p(99.9)<1000", "med!=2"} {
		f.Add("mcp_req_duration{method:tools/call}", s)
	}
	f.Add("mcp_req_failed{kind:timeout,scenario:s}", "rate<0.1")
	f.Fuzz(func(t *testing.T, metric, expr string) {
		if name, filter, err := ParseMetricKey(metric); err == nil {
			if _, ok := metricDefs[name]; !ok {
				t.Fatalf("accepted unknown metric %q", name)
			}
			for _, tf := range filter {
				if tf.Name == "" || tf.Value == "" || strings.ContainsAny(tf.Value, ",{}") {
					t.Fatalf("accepted bad filter %+v from %q", tf, metric)
				}
			}
		}
		x, err := ParseExpression(expr)
		if err != nil {
			return
		}
		y, err := ParseExpression(x.String())
		if err != nil || y != x {
			t.Fatalf("%q -> %q -> %+v, %v", expr, x.String(), y, err)
		}
	})
}
