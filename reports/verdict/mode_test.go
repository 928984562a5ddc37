package verdict

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Mode
		err  string
	}{
		{in: "fix", want: ModeFix},
		{in: " Regression ", want: ModeRegression},
		{in: "", err: "none given"},
		{in: "strict", err: `"strict"`},
	} {
		got, err := ParseMode(tt.in)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseMode(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrMode) {
			t.Fatalf("ParseMode(%q): %v, want ErrMode", tt.in, err)
		}
		// The error teaches the choice: both modes and what each asks.
		for _, want := range []string{tt.err, `"fix" (fix: before must show the leak`, `"regression" (regression: after must be no worse`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ParseMode(%q): %q lacks %q", tt.in, err, want)
			}
		}
	}
}
