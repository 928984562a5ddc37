// Package querytext turns the query texts PostgreSQL shows in
// pg_stat_activity into what leakbench can group by and safely store:
// a fingerprint (the statement with its values gone) and a masked text (the
// statement as it can be shown without the values in it), both free of
// control characters.
//
//	querytext.Fingerprint("SELECT * FROM t WHERE email = 'a@x.org' AND id IN (1, 2)")
//	// SELECT * FROM t WHERE email = ? AND id IN (?)
//	querytext.Mask("SELECT * FROM t WHERE email = 'a@x.org' AND id IN (1, 2)")
//	// SELECT * FROM t WHERE email = ? AND id IN (?, ?)
package querytext

import (
	"strings"
	"unicode/utf8"
)

// Fingerprint normalizes a query text so that the same statement with
// different values groups together: string, numeric, bit-string and
// dollar-quoted literals become ?, comments are dropped, whitespace collapses
// to single spaces, and a bracketed list of nothing but literals, such as
// IN (1, 2, 3) or ARRAY[1, 2], collapses to (?) or [?]. Bind parameters ($1)
// and identifiers are kept as written; keywords keep their case. Control
// characters (C0, DEL, C1), Unicode bidirectional controls and bytes that
// are not UTF-8 become U+FFFD, so that the text is safe to print on a
// terminal or in Markdown and HTML.
//
// pg_stat_activity.query is cut at track_activity_query_size bytes, so the
// text may end inside a literal, a quoted identifier or a comment: an open
// literal becomes ?, an open comment is dropped, an open quoted identifier is
// kept as it is. Fingerprint never fails, Fingerprint(Fingerprint(q)) ==
// Fingerprint(q) and Fingerprint(Mask(q)) == Fingerprint(q).
//
// It is a small hand-written lexer rather than a library: pg_query_go needs
// cgo, wasilibs/go-pgquery runs PostgreSQL's parser in a wasm runtime (a
// heavy dependency for a sampler), and a culprit needs only literal removal,
// not a parse tree.
func Fingerprint(query string) string {
	fp, _ := Normalize(query, false)
	return fp
}

// Mask is the query text as it can be stored and shown without the
// values in it: Fingerprint's normalization (literals replaced by ?,
// comments dropped, whitespace collapsed, control characters replaced) but
// with lists of literals kept at their length (IN (?, ?, ?)), and a text
// that PostgreSQL cut inside a literal, comment or quoted identifier ends in
// "…". A value can still show when it is not a literal in the text: an
// identifier, or a string with backslash escapes written without E under
// standard_conforming_strings = off. Mask(Mask(q)) == Mask(q).
func Mask(query string) string {
	_, masked := Normalize(query, true)
	return masked
}

// cutMark ends a masked text that PostgreSQL cut inside a token.
const cutMark = "…"

// Normalize lexes query once and returns its fingerprint and, when
// mask is set, its masked text.
func Normalize(query string, mask bool) (fingerprint, masked string) {
	// Controls are replaced before lexing, so that the output lexes as
	// the input did, and again after it for the whitespace that quoted
	// identifiers keep.
	l := lexer{src: sanitize(query, true)}
	l.run()
	if mask {
		masked = Sanitize(render(l.out))
		if l.cut {
			masked += cutMark
		}
	}
	return Sanitize(render(collapseLists(l.out))), masked
}

// lexer turns a query into tokens: out holds the tokens written so far.
type lexer struct {
	src   string
	pos   int
	out   []token
	space bool // whitespace or a comment came before the next token
	cut   bool // the text ends inside a literal, comment or quoted identifier
}

type token struct {
	text    string
	literal bool // a ? that stands for a literal
	space   bool // written with a space before it
}

func (l *lexer) run() {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case isSpace(c):
			l.pos++
			l.space = true
		case c == '-' && l.peek(1) == '-':
			l.skipLineComment()
		case c == '/' && l.peek(1) == '*':
			l.skipBlockComment()
		case c == '\'':
			l.stringLiteral(false)
		case c == '"':
			l.quotedIdent()
		case c == '$':
			l.dollar()
		case isDigit(c) || (c == '.' && isDigit(l.peek(1))):
			l.number()
		case l.atCutMark():
			// Mask's mark of a cut text, read back.
			l.pos = len(l.src)
			l.cut = true
		case isWordStart(c):
			l.word()
		default:
			l.punct(c)
		}
	}
}

// atCutMark: what is left is Mask's mark of a cut text.
func (l *lexer) atCutMark() bool {
	return l.src[l.pos] == cutMark[0] && l.src[l.pos:] == cutMark
}

func (l *lexer) peek(n int) byte {
	if l.pos+n < len(l.src) {
		return l.src[l.pos+n]
	}
	return 0
}

func (l *lexer) emit(text string, literal bool) {
	l.out = append(l.out, token{text: text, literal: literal, space: l.space})
	l.space = false
}

func (l *lexer) skipLineComment() {
	end := strings.IndexByte(l.src[l.pos:], '\n')
	if end < 0 {
		l.pos = len(l.src)
	} else {
		l.pos += end + 1
	}
	l.space = true
}

// skipBlockComment skips a /* */ comment; PostgreSQL's nest.
func (l *lexer) skipBlockComment() {
	depth := 0
	for l.pos < len(l.src) {
		switch {
		case l.src[l.pos] == '/' && l.peek(1) == '*':
			depth++
			l.pos += 2
		case l.src[l.pos] == '*' && l.peek(1) == '/':
			depth--
			l.pos += 2
			if depth == 0 {
				l.space = true
				return
			}
		default:
			l.pos++
		}
	}
	l.space = true // cut off inside the comment
	l.cut = true
}

// stringLiteral skips '…' (a doubled quote is a quote inside it) or, when escapes is
// set, E'…' where a backslash escapes the next byte. A literal cut off by
// truncation runs to the end of the text.
func (l *lexer) stringLiteral(escapes bool) {
	l.pos++ // opening quote
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case escapes && c == '\\':
			l.pos += 2
		case c == '\'' && l.peek(1) == '\'':
			l.pos += 2
		case c == '\'':
			l.pos++
			l.emit("?", true)
			return
		default:
			l.pos++
		}
	}
	l.pos = len(l.src)
	l.cut = true
	l.emit("?", true)
}

// quotedIdent keeps "…" verbatim ("" is a quote inside it).
func (l *lexer) quotedIdent() {
	start := l.pos
	l.pos++
	for l.pos < len(l.src) && !l.atCutMark() {
		if l.src[l.pos] == '"' {
			if l.peek(1) == '"' {
				l.pos += 2
				continue
			}
			l.pos++
			l.emit(l.src[start:l.pos], false)
			return
		}
		l.pos++
	}
	l.cut = true
	l.emit(l.src[start:l.pos], false)
}

// dollar handles $1 (a parameter: kept), $tag$…$tag$ and $$…$$ (literals:
// replaced), and a lone $ (kept as punctuation).
func (l *lexer) dollar() {
	start := l.pos
	if isDigit(l.peek(1)) {
		l.pos++
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
		l.emit(l.src[start:l.pos], false)
		return
	}
	end := l.pos + 1
	if end < len(l.src) && isWordStart(l.src[end]) {
		for end < len(l.src) && isTagByte(l.src[end]) {
			end++
		}
	}
	if end >= len(l.src) || l.src[end] != '$' {
		l.punct('$')
		return
	}
	delim := l.src[start : end+1]
	body := end + 1
	if i := strings.Index(l.src[body:], delim); i >= 0 {
		l.pos = body + i + len(delim)
	} else {
		l.pos = len(l.src) // cut off inside the literal
		l.cut = true
	}
	l.emit("?", true)
}

// number replaces 42, 4.2, .42, 4.2e-1, 0x2A, 1_000 (and junk glued to
// them) with ?. A sign belongs to the number only after a decimal exponent.
func (l *lexer) number() {
	start := l.pos
	hex := l.src[start] == '0' && (l.peek(1) == 'x' || l.peek(1) == 'X')
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if (c == '+' || c == '-') && !hex && l.pos > start && (l.src[l.pos-1] == 'e' || l.src[l.pos-1] == 'E') {
			l.pos++
			continue
		}
		if !isDigit(c) && !isLetter(c) && c != '_' && c != '.' {
			break
		}
		l.pos++
	}
	l.emit("?", true)
}

// word reads an identifier or keyword; E, B, X, N or U& right before a quote
// make the quote a literal's prefix.
func (l *lexer) word() {
	start := l.pos
	for l.pos < len(l.src) && isWordByte(l.src[l.pos]) && !l.atCutMark() {
		l.pos++
	}
	w := l.src[start:l.pos]
	if l.pos < len(l.src) && l.src[l.pos] == '\'' && len(w) == 1 {
		switch w[0] {
		case 'e', 'E':
			l.stringLiteral(true)
			return
		case 'b', 'B', 'x', 'X', 'n', 'N':
			l.stringLiteral(false)
			return
		}
	}
	if (w == "u" || w == "U") && l.peek(0) == '&' && l.peek(1) == '\'' {
		l.pos++ // &
		l.stringLiteral(false)
		return
	}
	l.emit(w, false)
}

// punct writes one byte of punctuation or operator. A ? is what
// Mask left for a literal (PostgreSQL's operators starting with ?, of
// jsonb, never stand alone in a list).
func (l *lexer) punct(c byte) {
	l.pos++
	l.emit(string(c), c == '?')
}

// collapseLists collapses, in place, a bracketed list of only literals and
// commas to one ?.
func collapseLists(toks []token) []token {
	out := toks[:0]
	var opens []int
	for _, t := range toks {
		switch t.text {
		case "(", "[":
			opens = append(opens, len(out))
		case ")", "]":
			if n := len(opens); n > 0 {
				open := opens[n-1]
				opens = opens[:n-1]
				if literalList(out[open+1:]) {
					out = out[:open+2]
					out[open+1].space = false
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// literalList says whether toks is "?, ?[, ?…]" (two literals or more).
func literalList(toks []token) bool {
	if len(toks) < 3 || len(toks)%2 == 0 {
		return false
	}
	for i, t := range toks {
		if i%2 == 0 && !t.literal || i%2 == 1 && t.text != "," {
			return false
		}
	}
	return true
}

// render joins the tokens: one space where the text had whitespace or a
// comment, none after an opening or before a closing bracket or a comma,
// always one after a comma.
func render(toks []token) string {
	n := 0
	for _, t := range toks {
		n += len(t.text) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, t := range toks {
		if i > 0 {
			prev := toks[i-1].text
			switch {
			case t.text == ")" || t.text == "]" || t.text == ",":
			case prev == "(" || prev == "[":
			case prev == "," || t.space:
				b.WriteByte(' ')
			}
		}
		b.WriteString(t.text)
	}
	return b.String()
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isWordStart: identifiers start with a letter, _ or any non-ASCII byte.
func isWordStart(c byte) bool { return isLetter(c) || c == '_' || c >= 0x80 }

// isWordByte: later bytes may also be digits or $.
func isWordByte(c byte) bool { return isWordStart(c) || isDigit(c) || c == '$' }

// isTagByte: a dollar-quote tag is an identifier without $.
func isTagByte(c byte) bool { return isWordStart(c) || isDigit(c) }

// Sanitize replaces what could act on a terminal or a renderer rather
// than print — C0 controls (whitespace included), DEL, C1 controls, the
// Unicode bidirectional controls and line separators — and bytes that are
// not UTF-8, with U+FFFD. ANSI escape sequences lose their ESC and print
// as harmless text.
func Sanitize(s string) string { return sanitize(s, false) }

// sanitize is sanitizeText, keeping ASCII whitespace with keepSpace.
func sanitize(s string, keepSpace bool) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && !(keepSpace && isSpace(c))) || c == 0x7f || c >= 0x80 {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if unsafeRune(r) && !(keepSpace && r < 0x20 && isSpace(byte(r))) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false // utf8.RuneError (a byte that is not UTF-8) is written as it is: U+FFFD
}
