package probes

import (
	"net/url"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// sqlcommenter comments. Services that use sqlcommenter (Google's
// specification; OpenTelemetry's and most ORMs' SQL instrumentations)
// append a comment to their statements naming the request behind them:
//
//	SELECT … /*application='mcp-gateway',route='tools%2Fcall',traceparent='00-4bf9…-00f0…-01'*/
//
// keys sorted, values URL-encoded and then single quotes escaped with a
// backslash; the comment stands at the end of the statement, before a
// final semicolon if there is one. pg_stat_activity.query shows it, cut
// at track_activity_query_size like the rest. The probe reads it from any
// service: an episode then carries the trace id and span id of the W3C
// traceparent, and every key/value, decoded, with values redacted.
//
// A comment the probe cannot use — unterminated (the server cut the text
// inside it), a value without its closing quote, a bad escape or percent
// encoding, a traceparent not of the W3C form (00-, 32 lowercase hex, -,
// 16 lowercase hex, -, 2 lowercase hex; ids not all zero) — is ignored
// and counted (Summary.MalformedComments), never an error. A trailing
// comment that is not of the key='value' form is a plain comment: not
// sqlcommenter, not counted.

// sqlComment is what a sqlcommenter comment said.
type sqlComment struct {
	traceID, spanID string
	kv              map[string]string // decoded, not yet redacted
}

type commentStatus uint8

const (
	commentNone commentStatus = iota
	commentOK
	commentMalformed
)

// parseSQLComment reads the sqlcommenter comment at the end of q. base is
// q without it (q itself when there is none).
func parseSQLComment(q string) (c sqlComment, base string, st commentStatus) {
	c, at, st := parseComment(q)
	if st == commentOK {
		return c, strings.TrimRight(q[:at], " \t\r\n"), st
	}
	return c, q, st
}

func parseComment(q string) (sqlComment, int, commentStatus) {
	t := strings.TrimRight(q, " \t\r\n;")
	if !strings.HasSuffix(t, "*/") {
		// Cut inside a comment? Only one that begins like sqlcommenter's
		// counts: a lone "/*" elsewhere may sit in a literal.
		if i := strings.LastIndex(t, "/*"); i >= 0 && !strings.Contains(t[i:], "*/") && looksLikeKey(t[i+2:]) {
			return sqlComment{}, 0, commentMalformed
		}
		return sqlComment{}, 0, commentNone
	}
	i := strings.LastIndex(t[:len(t)-2], "/*")
	if i < 0 {
		return sqlComment{}, 0, commentNone
	}
	body := t[i+2 : len(t)-2]
	if !looksLikeKey(body) {
		return sqlComment{}, 0, commentNone // a plain comment
	}
	kv, ok := parsePairs(body)
	if !ok {
		return sqlComment{}, 0, commentMalformed
	}
	c := sqlComment{kv: kv}
	if tp, has := kv["traceparent"]; has {
		tid, sid, ok := parseTraceparent(tp)
		if !ok {
			return sqlComment{}, 0, commentMalformed
		}
		c.traceID, c.spanID = tid, sid
	}
	return c, i, commentOK
}

// readComment sets an episode's trace ids and comment from its query, and
// returns the text fingerprints and masks are computed from: without the
// comment, so that the statements of many requests share one.
func (t *tracker) readComment(ep *rundir.Episode) string {
	c, base, st := parseSQLComment(ep.Query)
	switch st {
	case commentOK:
		for k, v := range c.kv {
			if k != "traceparent" { // checked: hex and dashes
				c.kv[k] = t.redacted.get(v)
			}
		}
		ep.TraceID, ep.SpanID, ep.Comment = c.traceID, c.spanID, c.kv
	case commentMalformed:
		t.malformedComments++
	}
	return base
}

// looksLikeKey: s begins with a key and "='" (after optional blanks).
func looksLikeKey(s string) bool {
	s = strings.TrimLeft(s, " ")
	n := 0
	for n < len(s) && isKeyByte(s[n]) {
		n++
	}
	return n > 0 && strings.HasPrefix(s[n:], "='")
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '%'
}

// parsePairs parses key='value',key='value' (blanks allowed around the
// separators); keys and values are percent-decoded.
func parsePairs(s string) (map[string]string, bool) {
	kv := make(map[string]string, 4)
	for {
		s = strings.TrimLeft(s, " ")
		n := 0
		for n < len(s) && isKeyByte(s[n]) {
			n++
		}
		if n == 0 || !strings.HasPrefix(s[n:], "='") {
			return nil, false
		}
		key, err := url.PathUnescape(s[:n])
		if err != nil {
			return nil, false
		}
		s = s[n+2:]
		var val strings.Builder
		closed := false
		for j := 0; j < len(s); j++ {
			switch c := s[j]; c {
			case '\\':
				if j+1 >= len(s) || (s[j+1] != '\'' && s[j+1] != '\\') {
					return nil, false // a bad escape
				}
				val.WriteByte(s[j+1])
				j++
			case '\'':
				s, closed = s[j+1:], true
			default:
				val.WriteByte(c)
			}
			if closed {
				break
			}
		}
		if !closed {
			return nil, false
		}
		v, err := url.PathUnescape(val.String())
		if err != nil {
			return nil, false
		}
		kv[key] = v
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return kv, true
		}
		if s[0] != ',' {
			return nil, false
		}
		s = s[1:]
	}
}

// parseTraceparent checks the W3C form version 00 and returns its trace
// id and span id.
func parseTraceparent(tp string) (traceID, spanID string, ok bool) {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return "", "", false
	}
	traceID, spanID = tp[3:35], tp[36:52]
	if !lowerHex(traceID) || !lowerHex(spanID) || !lowerHex(tp[53:]) ||
		strings.Trim(traceID, "0") == "" || strings.Trim(spanID, "0") == "" {
		return "", "", false
	}
	return traceID, spanID, true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// redactions caches redact.String of comment values: a service's
// application, route or framework values repeat, and the redaction
// policy's regular expressions are most of a comment's cost. At most
// maxRedactions entries (cleared when full).
type redactions map[string]string

const maxRedactions = 1024

func (r *redactions) get(v string) string {
	if out, ok := (*r)[v]; ok {
		return out
	}
	if *r == nil || len(*r) >= maxRedactions {
		*r = make(redactions)
	}
	out := redact.String(v)
	(*r)[v] = out
	return out
}
