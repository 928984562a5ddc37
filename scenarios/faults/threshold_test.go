package faults

import "testing"

func TestRecoveryThreshold(t *testing.T) {
	vals := []float64{4, 1, 3, 2, 10}
	for _, tt := range []struct {
		expr string
		obs  float64
		pass bool
	}{
		{"max<10", 10, false}, {"max<=10", 10, true}, {"min<2", 1, true}, {"avg<4", 4, false},
		{"med<3.5", 3, true}, {"p(80)<5", 4, true}, {"p(90)<5", 10, false},
	} {
		th, err := ParseRecoveryThreshold(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := th.Observe(vals); got != tt.obs || th.Holds(got) != tt.pass {
			t.Errorf("%s: observed %g (holds %v), want %g (holds %v)", tt.expr, got, th.Holds(got), tt.obs, tt.pass)
		}
	}
	for _, bad := range []string{"most<3", "rate<1", "count>2", "max<", "max<-x"} {
		if _, err := ParseRecoveryThreshold(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
