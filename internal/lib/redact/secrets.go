package redact

import (
	"cmp"
	"slices"
	"strings"
)

// Secrets masks many secrets known by value at once: the bearer tokens of
// thousands of users, say, in every error message a run keeps. Calling
// [Literal] once per secret would run [String]'s regular expressions once
// per secret too — 3,000 users' tokens made every failed request cost
// milliseconds of CPU, which starved the load generator in the very
// seconds a starved service's requests time out. Secrets finds every
// occurrence in one pass of a [strings.Replacer] and runs [String] once.
// The zero value and a nil *Secrets mask no known secret, only what
// [String] finds. A Secrets is safe for concurrent use.
type Secrets struct {
	list     []string // longest first, without duplicates or empties
	replacer *strings.Replacer
	// byStart indexes list by each secret's first minCutSecret bytes
	// (those longer than that: only they can be cut after a start of at
	// least minCutSecret bytes), so that a cut ("…") is matched against
	// the few secrets that begin like the text before it, not all of
	// them: 3,000 tokens cost a millisecond a message one by one.
	byStart map[string][]int
	maxLen  int
}

// NewSecrets returns a Secrets that masks each of list wherever it occurs.
func NewSecrets(list []string) *Secrets {
	s := &Secrets{}
	for _, v := range list {
		if v != "" {
			s.list = append(s.list, v)
		}
	}
	// strings.Replacer takes, at each position, the first pattern in
	// argument order that matches: the longest first, so that a secret
	// that begins another does not leave the other's tail unmasked.
	slices.SortFunc(s.list, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	s.list = slices.Compact(s.list)
	if len(s.list) > 0 {
		pairs := make([]string, 0, 2*len(s.list))
		for _, v := range s.list {
			pairs = append(pairs, v, Mask)
		}
		s.replacer = strings.NewReplacer(pairs...)
		s.byStart = make(map[string][]int)
		for i, v := range s.list {
			if len(v) > minCutSecret {
				s.byStart[v[:minCutSecret]] = append(s.byStart[v[:minCutSecret]], i)
			}
			s.maxLen = max(s.maxLen, len(v))
		}
	}
	return s
}

// Redact returns text with every known secret masked, also a secret's
// start where the text was cut right after it ("…"), as [Literal] does for
// one, and every other secret masked as by [String].
func (s *Secrets) Redact(text string) string {
	if s != nil && s.replacer != nil {
		// The starts cut before "…" first, longest secret first: a
		// shorter secret that begins a longer one would otherwise mask
		// only its own part of the longer one's cut start.
		if strings.Contains(text, "…") {
			text = s.maskCutStarts(text)
		}
		text = s.replacer.Replace(text)
	}
	return String(text)
}

// maskCutStarts masks, before every "…" in text, a secret's start that
// the text ends with there, as maskCutPrefix does for each secret of the
// list in turn: the first secret in the list's order (longest first)
// that matches, its longest start. (One by one, a later secret would then
// be matched against the text ending in Mask: only a secret that
// begins with Mask's own letters could differ.)
func (s *Secrets) maskCutStarts(text string) string {
	var b strings.Builder
	for {
		head, rest, cut := strings.Cut(text, "…")
		best, bestK := -1, 0
		for i := max(0, len(head)-(s.maxLen-1)); i+minCutSecret <= len(head); i++ {
			k := len(head) - i
			for _, idx := range s.byStart[head[i:i+minCutSecret]] {
				if (best < 0 || idx < best) && k < len(s.list[idx]) && strings.HasPrefix(s.list[idx], head[i:]) {
					// i ascends: the first k found for a secret is
					// its longest.
					best, bestK = idx, k
				}
			}
		}
		if best >= 0 {
			head = head[:len(head)-bestK] + Mask
		}
		b.WriteString(head)
		if !cut {
			return b.String()
		}
		b.WriteString("…")
		text = rest
	}
}
