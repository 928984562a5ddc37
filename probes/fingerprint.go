package probes

import "strings"

// Fingerprint normalizes a query text so that the same statement with
// different values groups together: string, numeric, bit-string and
// dollar-quoted literals become ?, comments are dropped, whitespace collapses
// to single spaces, and a bracketed list of nothing but literals, such as
// IN (1, 2, 3) or ARRAY[1, 2], collapses to (?) or [?]. Bind parameters ($1)
// and identifiers are kept as written; keywords keep their case.
//
// pg_stat_activity.query is cut at track_activity_query_size bytes, so the
// text may end inside a literal, a quoted identifier or a comment: an open
// literal becomes ?, an open comment is dropped, an open quoted identifier is
// kept as it is. Fingerprint never fails and Fingerprint(Fingerprint(q)) ==
// Fingerprint(q).
//
// It is a small hand-written lexer rather than a library: pg_query_go needs
// cgo, wasilibs/go-pgquery runs PostgreSQL's parser in a wasm runtime (a
// heavy dependency for a sampler), and a culprit needs only literal removal,
// not a parse tree.
func Fingerprint(query string) string {
	l := lexer{src: query}
	return l.run()
}

// lexer turns a query into tokens and writes the normalized text. out holds
// the tokens written so far; opens the indexes in out of unclosed ( and [.
type lexer struct {
	src   string
	pos   int
	out   []token
	opens []int
	space bool // whitespace or a comment came before the next token
}

type token struct {
	text    string
	literal bool // a ? that stands for a literal
	space   bool // written with a space before it
}

func (l *lexer) run() string {
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
		case isWordStart(c):
			l.word()
		default:
			l.punct(c)
		}
	}
	return l.render()
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
	l.emit("?", true)
}

// quotedIdent keeps "…" verbatim ("" is a quote inside it).
func (l *lexer) quotedIdent() {
	start := l.pos
	l.pos++
	for l.pos < len(l.src) {
		if l.src[l.pos] == '"' {
			if l.peek(1) == '"' {
				l.pos += 2
				continue
			}
			l.pos++
			break
		}
		l.pos++
	}
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
	for l.pos < len(l.src) && isWordByte(l.src[l.pos]) {
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

// punct writes one byte of punctuation or operator. A closing bracket whose
// contents are only literals and commas collapses them to one ?.
func (l *lexer) punct(c byte) {
	l.pos++
	switch c {
	case '(', '[':
		l.emit(string(c), false)
		l.opens = append(l.opens, len(l.out)-1)
		return
	case ')', ']':
		if n := len(l.opens); n > 0 {
			open := l.opens[n-1]
			l.opens = l.opens[:n-1]
			if literalList(l.out[open+1:]) {
				l.out = l.out[:open+2]
				l.out[open+1].space = false
			}
		}
	}
	l.emit(string(c), false)
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
func (l *lexer) render() string {
	var b strings.Builder
	b.Grow(len(l.src))
	for i, t := range l.out {
		if i > 0 {
			prev := l.out[i-1].text
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
