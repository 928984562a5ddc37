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
			for _, v := range s.list {
				text = maskCutPrefix(text, v)
			}
		}
		text = s.replacer.Replace(text)
	}
	return String(text)
}
