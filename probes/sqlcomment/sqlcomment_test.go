package sqlcomment

import (
	"strings"
	"testing"

	"github.com/leakbench/leakbench/probes/querytext"
)

const (
	tp      = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanID  = "00f067aa0ba902b7"
)

func TestParseSQLComment(t *testing.T) {
	const sel = "SELECT team_id FROM email_team_members WHERE user_email = 'a@b.c'"
	for _, tc := range []struct {
		name, q string
		want    Status
		kv      map[string]string
		base    string
	}{
		{"gateway's", sel + " /*application='mcp-gateway',route='tools%2Fcall',traceparent='" + tp + "'*/", OK,
			map[string]string{"application": "mcp-gateway", "route": "tools/call", "traceparent": tp}, sel},
		{"before a semicolon", sel + " /*traceparent='" + tp + "'*/;", OK, map[string]string{"traceparent": tp}, sel},
		{"escaped quote, blanks", sel + "/* action='it\\'s' , traceparent='" + tp + "' */", OK,
			map[string]string{"action": "it's", "traceparent": tp}, sel},
		{"no traceparent", sel + " /*framework='spring',route='%2Fusers'*/", OK,
			map[string]string{"framework": "spring", "route": "/users"}, sel},
		{"a secret value is redacted", sel + " /*db_driver='postgres%3A%2F%2Fu%3Ahunter2%40h%2Fdb',traceparent='" + tp + "'*/", OK,
			map[string]string{"traceparent": tp}, sel},
		{"none", sel, None, nil, sel},
		{"a plain comment", sel + " /* just a note */", None, nil, sel},
		{"comment inside, not at the end", "SELECT 1 /*traceparent='" + tp + "'*/ FROM t", None, nil, ""},
		{"cut at track_activity_query_size", sel + " /*application='mcp-gateway',route='tools%2Fcall',tracepar", Malformed, nil, ""},
		{"cut inside a value", sel + " /*traceparent='00-4bf92f35", Malformed, nil, ""},
		{"unterminated value", sel + " /*traceparent='" + tp + "*/", Malformed, nil, ""},
		{"bad escape", sel + ` /*a='x\ny',traceparent='` + tp + `'*/`, Malformed, nil, ""},
		{"bad percent", sel + " /*route='%zz',traceparent='" + tp + "'*/", Malformed, nil, ""},
		{"no separator", sel + " /*a='1' b='2'*/", Malformed, nil, ""},
		{"upper-case traceparent", sel + " /*traceparent='" + strings.ToUpper(tp) + "'*/", Malformed, nil, ""},
		{"short traceparent", sel + " /*traceparent='00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7'*/", Malformed, nil, ""},
		{"version 01", sel + " /*traceparent='01" + tp[2:] + "'*/", Malformed, nil, ""},
		{"zero trace id", sel + " /*traceparent='00-00000000000000000000000000000000-00f067aa0ba902b7-01'*/", Malformed, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, base, st := parseSQLComment(tc.q)
			if st != tc.want {
				t.Fatalf("status %d, want %d", st, tc.want)
			}
			if st != OK {
				if c.TraceID != "" || c.Pairs != nil || base != tc.q {
					t.Errorf("not OK, yet %+v, base %q", c, base)
				}
				return
			}
			if base != tc.base {
				t.Errorf("base %q, want %q", base, tc.base)
			}
			if _, has := tc.kv["traceparent"]; has && (c.TraceID != traceID || c.SpanID != spanID) {
				t.Errorf("ids %s %s", c.TraceID, c.SpanID)
			}
			for k, v := range tc.kv {
				if c.Pairs[k] != v {
					t.Errorf("%s = %q, want %q (all: %v)", k, c.Pairs[k], v, c.Pairs)
				}
			}
			var r Reader
			read, _, _ := r.Read(tc.q)
			if d := read.Pairs["db_driver"]; strings.Contains(d, "hunter2") {
				t.Errorf("secret kept: %q", d)
			}
		})
	}
}

// TestFingerprintIgnoresComments: the statements of many requests, each
// with its own traceparent, share one fingerprint and one masked text.
func TestFingerprintIgnoresComments(t *testing.T) {
	const sel = "SELECT team_id FROM email_team_members WHERE user_email = 'a@b.c'"
	a := sel + " /*application='mcp-gateway',traceparent='" + tp + "'*/"
	b := sel + " /*application='mcp-gateway',traceparent='00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'*/"
	if querytext.Fingerprint(a) != querytext.Fingerprint(sel) || querytext.Fingerprint(b) != querytext.Fingerprint(sel) {
		t.Errorf("fingerprints differ: %q %q %q", querytext.Fingerprint(a), querytext.Fingerprint(b), querytext.Fingerprint(sel))
	}
	if querytext.Mask(a) != querytext.Mask(sel) {
		t.Errorf("masked %q, want %q", querytext.Mask(a), querytext.Mask(sel))
	}
}

// FuzzSQLComment: the parser never panics; what it accepts has a W3C
// trace id (when it has one) and a base that is a prefix of the query.
func FuzzSQLComment(f *testing.F) {
	for _, s := range []string{
		"SELECT 1 /*application='mcp-gateway',route='tools%2Fcall',traceparent='" + tp + "'*/",
		"SELECT 1 /*a='it\\'s',traceparent='" + tp + "'*/;",
		"SELECT 1 /*traceparent='00-4bf92f35",
		"SELECT '/*' /* x */",
		"/**/", "/*='*/", "*/", "/*a='%'*/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		c, base, st := parseSQLComment(q)
		if !strings.HasPrefix(q, base) {
			t.Fatalf("base %q is not a prefix of %q", base, q)
		}
		if st != OK {
			if c.Pairs != nil || c.TraceID != "" {
				t.Fatalf("status %d with %+v", st, c)
			}
			return
		}
		if _, has := c.Pairs["traceparent"]; has {
			if _, _, ok := parseTraceparent(c.Pairs["traceparent"]); !ok || len(c.TraceID) != 32 || len(c.SpanID) != 16 {
				t.Fatalf("accepted %q", c.Pairs["traceparent"])
			}
		} else if c.TraceID != "" {
			t.Fatal("trace id without traceparent")
		}
	})
}
