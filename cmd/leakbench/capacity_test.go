package main

import "testing"

func TestSplitLimit(t *testing.T) {
	for _, tc := range []struct{ in, metric, expr string }{
		{"mcp_req_failed:rate<0.01", "mcp_req_failed", "rate<0.01"},
		{"mcp_req_duration{name:generate_report}:p(95)<400", "mcp_req_duration{name:generate_report}", "p(95)<400"},
		{"mcp_req_duration{method:tools/call}: p(99) < 900", "mcp_req_duration{method:tools/call}", "p(99) < 900"},
		{"mcp_req_duration{name:x}", "", ""},
		{":p(95)<1", "", ""},
	} {
		m, e, ok := splitLimit(tc.in)
		if m != tc.metric || e != tc.expr || ok != (tc.metric != "") {
			t.Errorf("splitLimit(%q) = %q, %q, %v; want %q, %q", tc.in, m, e, ok, tc.metric, tc.expr)
		}
	}
}
