package probes

import "testing"

func TestSentTokensFind(t *testing.T) {
	s := newSentTokens([]string{"tok-a", "tok-b", "tok-a", ""})
	tests := []struct {
		q    string
		want int // -1: none
	}{
		{"SELECT u.id FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token = 'tok-b'", 1},
		{"SELECT 'x', 'tok-a' FROM t", 0},
		{"SELECT 'it''s', 'tok-b'", 1},
		{"SELECT 'tok-b''s'", -1},                // a different literal
		{"SELECT * FROM t WHERE token = $1", -1}, // bound on the server: nothing to see
		{"SELECT 'tok-", -1},                     // cut
		{"SELECT tok-a", -1},                     // not a literal
		{"", -1},
	}
	for _, tt := range tests {
		got := s.find(tt.q)
		switch {
		case tt.want < 0 && got != nil:
			t.Errorf("%q: found token %d, want none", tt.q, got.Token)
		case tt.want >= 0 && (got == nil || got.Token != tt.want || got.Tokens != 4):
			t.Errorf("%q: %+v, want token %d of 4", tt.q, got, tt.want)
		}
	}
	if newSentTokens(nil).find("SELECT 'tok-a'") != nil {
		t.Error("no tokens given: found one")
	}
}

func FuzzSentTokensFind(f *testing.F) {
	for _, q := range []string{"SELECT 'tok-a'", "'''", "'a''b' 'tok-a'", "x'"} {
		f.Add(q)
	}
	s := newSentTokens([]string{"tok-a", "b"})
	f.Fuzz(func(t *testing.T, q string) {
		if got := s.find(q); got != nil && got.Token != 0 && got.Token != 1 {
			t.Fatalf("%q: token %d out of range", q, got.Token)
		}
	})
}
