package sqlcomment

import (
	"net/url"
	"strings"

	"github.com/leakbench/leakbench/internal/lib/redact"
)

// Comment is what a sqlcommenter comment said.
type Comment struct {
	// TraceID and SpanID are those of the comment's W3C traceparent, in
	// lowercase hex; empty when it has none.
	TraceID, SpanID string
	// Pairs is every key/value of the comment, percent-decoded; the values
	// are redacted when Reader.Read returned it, traceparent's excepted.
	Pairs map[string]string
}

// Status says whether a query carried a comment the parser could use.
type Status uint8

const (
	// None: no sqlcommenter comment at the end of the query (a plain
	// comment is none either).
	None Status = iota
	// OK: a comment was read.
	OK
	// Malformed: a comment was there but cannot be used (cut by the
	// server, badly escaped, or with a traceparent not of the W3C form).
	// The caller counts it; it is never an error.
	Malformed
)

// parseSQLComment reads the sqlcommenter comment at the end of q. base is
// q without it (q itself when there is none).
func parseSQLComment(q string) (c Comment, base string, st Status) {
	c, at, st := parseComment(q)
	if st == OK {
		return c, strings.TrimRight(q[:at], " \t\r\n"), st
	}
	return c, q, st
}

func parseComment(q string) (Comment, int, Status) {
	t := strings.TrimRight(q, " \t\r\n;")
	if !strings.HasSuffix(t, "*/") {
		// Cut inside a comment? Only one that begins like sqlcommenter's
		// counts: a lone "/*" elsewhere may sit in a literal.
		if i := strings.LastIndex(t, "/*"); i >= 0 && !strings.Contains(t[i:], "*/") && looksLikeKey(t[i+2:]) {
			return Comment{}, 0, Malformed
		}
		return Comment{}, 0, None
	}
	i := strings.LastIndex(t[:len(t)-2], "/*")
	if i < 0 {
		return Comment{}, 0, None
	}
	body := t[i+2 : len(t)-2]
	if !looksLikeKey(body) {
		return Comment{}, 0, None // a plain comment
	}
	kv, ok := parsePairs(body)
	if !ok {
		return Comment{}, 0, Malformed
	}
	c := Comment{Pairs: kv}
	if tp, has := kv["traceparent"]; has {
		tid, sid, ok := parseTraceparent(tp)
		if !ok {
			return Comment{}, 0, Malformed
		}
		c.TraceID, c.SpanID = tid, sid
	}
	return c, i, OK
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

// Reader reads the sqlcommenter comments of one stream of queries, such
// as a run's episodes, with the values redacted: a comment's values are
// whatever the service put there, and they are stored and shown. Its
// zero value is ready to use; it is not safe for concurrent use.
type Reader struct {
	redacted redactions // of comment values
}

// Read reads the sqlcommenter comment at the end of q, with the values
// redacted (traceparent's checked instead). base is q without the comment
// when st is OK, q itself otherwise: fingerprints and masks are computed
// from it, so that the statements of many requests share one.
func (r *Reader) Read(q string) (c Comment, base string, st Status) {
	c, base, st = parseSQLComment(q)
	if st == OK {
		for k, v := range c.Pairs {
			if k != "traceparent" { // checked: hex and dashes
				c.Pairs[k] = r.redacted.get(v)
			}
		}
	}
	return c, base, st
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
