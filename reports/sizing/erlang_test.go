package sizing

import (
	"math"
	"testing"
)

// TestErlangC: the probability of waiting against published Erlang C
// values, and the smallest pool for a wait target.
func TestErlangC(t *testing.T) {
	for _, tc := range []struct {
		c    int
		a, p float64
	}{
		{1, 0.5, 0.5},     // M/M/1: ρ
		{2, 1, 1.0 / 3},   // (A²/2 · 2) / (1 + 1 + 1) = 1/3
		{10, 5, 0.036105}, // tables: 3.6%
		{5, 5, 1},         // no room: every request waits
	} {
		if got := erlangC(tc.c, tc.a); math.Abs(got-tc.p) > 1e-5 {
			t.Errorf("C(%d, %g) = %.6f, want %.6f", tc.c, tc.a, got, tc.p)
		}
	}
	if c, p, _ := poolFor(5, 0.05); c != 10 || p > 0.05 {
		t.Errorf("pool for 5 erlangs at 5%%: %d (%.4f), want 10", c, p)
	}
	if c, _, _ := poolFor(0.01, 0.05); c != 1 {
		t.Errorf("pool for almost no load: %d, want 1", c)
	}
}

// TestValidate: the bad inputs the CLI's flags can give.
func TestValidate(t *testing.T) {
	zero, rate, none, one := 0.0, 10.0, 0, 1
	for _, tc := range []struct {
		o  Options
		ok bool
	}{
		{Options{}, true},
		{Options{TargetRate: &rate, Replicas: &one}, true},
		{Options{TargetRate: &zero}, false},
		{Options{Replicas: &none}, false},
		{Options{MaxWaitProbability: 1}, false},
	} {
		if err := tc.o.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.o, err)
		}
	}
}
