package redact

import (
	"math/rand/v2"
	"testing"
)

// TestCutStartsAsOneByOne compares Redact's indexed matching of the
// starts cut before "…" with maskCutPrefix applied for each secret in
// turn (longest first, the order Redact had), on texts and secrets drawn
// from a small alphabet so that starts overlap, repeat and nest.
func TestCutStartsAsOneByOne(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 40))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc"[r.IntN(3)]
		}
		return string(b)
	}
	for range 3000 {
		list := make([]string, 1+r.IntN(8))
		for i := range list {
			list[i] = word(1 + r.IntN(12))
		}
		text := ""
		for range 1 + r.IntN(4) {
			text += word(r.IntN(16)) + []string{"…", " ", "…"}[r.IntN(3)]
		}
		set := NewSecrets(list)
		want := text
		for _, v := range set.list {
			want = maskCutPrefix(want, v)
		}
		if got := set.maskCutStarts(text); got != want {
			t.Fatalf("secrets %q, text %q: indexed %q, one by one %q", set.list, text, got, want)
		}
	}
}
