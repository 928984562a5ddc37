package textutil

import (
	"encoding/json"
	"testing"
)

// FuzzAppendJSONString: our string encoder agrees with encoding/json.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("quote\" back\\ nl\n tab\t ctl\x01 bad\xff utf8 é ✓")
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONString(nil, s)
		var back, want string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, got, err)
		}
		ref, _ := json.Marshal(s)
		_ = json.Unmarshal(ref, &want)
		if back != want {
			t.Fatalf("%q round-trips to %q; encoding/json gives %q", s, back, want)
		}
	})
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{{"short", 10, "short"}, {"exactly", 7, "exactly"}, {"longer text", 6, "longer…"}} {
		if got := Truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
